"""Pure figure builders: data in, plotly (or altair) figure out. No streamlit here."""
