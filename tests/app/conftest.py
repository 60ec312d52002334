"""AppTest runs the pages with the settings of .streamlit/config.toml that matter to them."""

from streamlit import config

# No page uses magic; with it off, pages compile without ast.parse, which CPython 3.11 does not make
# safe across threads (the four-sessions test compiles pages in parallel threads).
config.set_option("runner.magicEnabled", False)
