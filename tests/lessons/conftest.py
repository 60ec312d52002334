"""Lesson tests build the data a figure shows at the page's defaults and check what its text says."""

from streamlit import config

config.set_option("runner.magicEnabled", False)
