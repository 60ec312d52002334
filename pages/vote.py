"""The students' side of a class poll, on a phone: /vote?room=CODE (not listed in the navigation)."""

from explorer.ui.vote import vote_page

vote_page()
