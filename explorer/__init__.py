"""Attention Explorer's compute package.

Plain Python + torch: everything here can be imported, tested and exported without a
Streamlit server. Only ``explorer.ui`` imports streamlit.
"""

__all__ = ["attention", "data", "device", "kernels", "regression"]
