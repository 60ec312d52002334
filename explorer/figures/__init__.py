"""Pure figure builders: data in, plotly figure out. No streamlit here.

The lesson figures themselves (compute, then draw) live in ``explorer.lessons``.
"""
