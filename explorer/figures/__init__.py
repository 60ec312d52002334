"""Pure figure builders: data in, plotly figure out. No streamlit here. ``registry`` names the lesson figures."""
