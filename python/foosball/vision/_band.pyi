# Types of the compiled module built from _band.c (see its comments).
import numpy as np

def band_mask(image: np.ndarray, x0: int, y0: int, cols: int, rows: int, band: bytes,
              out: np.ndarray, clip: np.ndarray | None, clip_x0: int,
              clip_y0: int) -> tuple[int, int, int, int, int, int]: ...
def mask_sums(mask: np.ndarray) -> tuple[int, int, int, int, int, int]: ...
