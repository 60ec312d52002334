"""Streamlit widgets shared by the pages. The only part of ``explorer`` that imports streamlit."""
