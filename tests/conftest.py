import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]  # the repository
sys.path.insert(0, str(ROOT))
os.environ.setdefault("EXPLORER_DEVICE", "cpu")  # the suite is CPU-first; CUDA tests ask for it

from explorer.figures import style  # noqa: E402

style.VALIDATE = True  # every figure the tests build goes through plotly's property validation
