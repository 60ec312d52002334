"""MkDocs hooks of the documentation site (mkdocs.yml ``hooks:``; excluded from the site's pages).

Every page, the API reference generated from the docstrings included, is checked for names of the package
(``explorer.attention.masked_weights``) that name nothing: each one is a warning, which ``mkdocs build --strict``
turns into a failed build, so a renamed function cannot leave a reference to its old name behind."""

import html
import logging
import re

from explorer.references import broken

log = logging.getLogger("mkdocs.hooks.references")
TAG = re.compile(r"<[^>]+>")


def on_page_content(content, page, config, files):
    for name in broken(html.unescape(TAG.sub(" ", content))):
        log.warning(f"{page.file.src_path}: '{name}' names nothing in the explorer package (renamed or removed?)")
    return content
