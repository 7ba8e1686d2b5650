/* The ball detector's colour threshold in one call: BGR pixels of a window of a frame ->
 * HSV band mask (255 / 0), cleared where a clip mask is 0, and the moments of what is left.
 *
 * Why C: a tracking step runs this on a few hundred to a few thousand pixels. As OpenCV and
 * numpy calls (window copy, BGR -> HSV, inRange, AND with the field mask, moments) it was
 * five calls with their argument parsing and temporary views, and each one's code comes
 * back cold from L3 when something else has swept the caches between two frames (measured:
 * a few microseconds per call, more than the pixels cost). One loop over the window's
 * pixels, straight from the frame, with no intermediate image.
 *
 * The HSV values are OpenCV's 8-bit BGR -> HSV (hue 0..179) to the bit: the same integer
 * arithmetic and the same division tables (imgproc/src/color_hsv.simd.hpp, RGB2HSV_b);
 * tests/vision/test_band.py compares every one of the 2^24 colours with cv2.cvtColor. The
 * band test is cv2.inRange's (bounds inclusive; a band through red is hue_low..179 or
 * 0..hue_high).
 *
 * Arrays come through the buffer protocol (no numpy headers needed to build). */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>

#define HSV_SHIFT 12
#define HSV_ROUND (1 << (HSV_SHIFT - 1))

/* saturate_cast<int>(double) in OpenCV is cvRound: nearest, ties to even, as lrint. */
static int sdiv_table[256];
static int hdiv_table[256];

static void init_tables(void)
{
    sdiv_table[0] = hdiv_table[0] = 0;
    for (int i = 1; i < 256; i++) {
        sdiv_table[i] = (int)lrint((255 << HSV_SHIFT) / (1.0 * i));
        hdiv_table[i] = (int)lrint((180 << HSV_SHIFT) / (6.0 * i));
    }
}

typedef struct {
    int hue_low, hue_high, sat_low, sat_high, val_low, val_high;
} Band;

/* Whether a BGR pixel's HSV lies in the band; the cheaper tests (value, saturation) first. */
static inline int in_band(int b, int g, int r, const Band *band)
{
    int v = b, vmin = b;
    if (g > v) v = g;
    if (r > v) v = r;
    if (v < band->val_low || v > band->val_high)
        return 0;
    if (g < vmin) vmin = g;
    if (r < vmin) vmin = r;
    int diff = v - vmin;
    int s = (diff * sdiv_table[v] + HSV_ROUND) >> HSV_SHIFT;
    if (s < band->sat_low || s > band->sat_high)
        return 0;
    int h;
    if (v == r)
        h = g - b;
    else if (v == g)
        h = b - r + 2 * diff;
    else
        h = r - g + 4 * diff;
    h = (h * hdiv_table[diff] + HSV_ROUND) >> HSV_SHIFT;
    if (h < 0)
        h += 180;
    if (h > 255)
        h = 255; /* saturate_cast<uchar>, as OpenCV stores it */
    if (band->hue_low <= band->hue_high)
        return band->hue_low <= h && h <= band->hue_high;
    return (band->hue_low <= h && h <= 179) || h <= band->hue_high;
}

/* Sums over the set pixels of a rows x cols mask: count, x, y, x^2, x y, y^2. */
typedef struct {
    int64_t n, sx, sy, sxx, sxy, syy;
} Sums;

static inline void add_row(Sums *sums, int64_t y, int64_t n, int64_t sx, int64_t sxx)
{
    sums->n += n;
    sums->sx += sx;
    sums->sy += y * n;
    sums->sxx += sxx;
    sums->sxy += y * sx;
    sums->syy += y * y * n;
}

static PyObject *sums_tuple(const Sums *s)
{
    return Py_BuildValue("(LLLLLL)", (long long)s->n, (long long)s->sx, (long long)s->sy,
                         (long long)s->sxx, (long long)s->sxy, (long long)s->syy);
}

static int get_int(PyObject *obj, const char *name, Py_ssize_t *out)
{
    *out = PyLong_AsSsize_t(obj);
    if (*out == -1 && PyErr_Occurred()) {
        PyErr_Format(PyExc_TypeError, "%s: an int is needed", name);
        return -1;
    }
    return 0;
}

/* A 2-D (mask) or 3-D (pixels) uint8 array whose innermost axis is contiguous. */
static int get_image(PyObject *obj, Py_buffer *view, int ndim, int writable, const char *name)
{
    int flags = PyBUF_STRIDES | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, view, flags) < 0)
        return -1;
    if (view->ndim != ndim || view->itemsize != 1 || view->strides[ndim - 1] != 1) {
        PyErr_Format(PyExc_ValueError, "%s: a %d-D uint8 array with a contiguous last axis "
                     "is needed", name, ndim);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

static int window_inside(Py_buffer *view, Py_ssize_t x0, Py_ssize_t y0, Py_ssize_t cols,
                         Py_ssize_t rows, const char *name)
{
    if (x0 < 0 || y0 < 0 || cols < 0 || rows < 0 || x0 + cols > view->shape[1]
            || y0 + rows > view->shape[0]) {
        PyErr_Format(PyExc_ValueError, "%s: the window (%zd, %zd) + %zd x %zd rows is not "
                     "inside its %zd x %zd", name, x0, y0, cols, rows, view->shape[1],
                     view->shape[0]);
        return -1;
    }
    return 0;
}

PyDoc_STRVAR(band_mask_doc,
"band_mask(image, x0, y0, cols, rows, band, out, clip, clip_x0, clip_y0) -> sums\n\n"
"The HSV band mask of the window (x0, y0, cols, rows) of a BGR image (h x w x 3 uint8):\n"
"255 where the pixel's HSV (as cv2.cvtColor COLOR_BGR2HSV gives it) lies in `band` and\n"
"`clip` (a 2-D uint8 array or None) is nonzero at (clip_x0 + x, clip_y0 + y), else 0;\n"
"written row by row (rows x cols, contiguous) into the writable buffer `out`. `band`:\n"
"6 bytes hue_low, hue_high, sat_low, sat_high, val_low, val_high (hue_low > hue_high: the\n"
"band runs through red). Returns the mask's sums (count, x, y, x^2, x y, y^2), x and y\n"
"counted from the window's corner.");

static PyObject *band_mask(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 10) {
        PyErr_SetString(PyExc_TypeError, "band_mask takes 10 arguments");
        return NULL;
    }
    Py_ssize_t x0, y0, cols, rows, cx0, cy0;
    if (get_int(args[1], "x0", &x0) || get_int(args[2], "y0", &y0)
            || get_int(args[3], "cols", &cols) || get_int(args[4], "rows", &rows)
            || get_int(args[8], "clip_x0", &cx0) || get_int(args[9], "clip_y0", &cy0))
        return NULL;
    if (!PyBytes_Check(args[5]) || PyBytes_GET_SIZE(args[5]) != 6) {
        PyErr_SetString(PyExc_TypeError, "band: 6 bytes are needed");
        return NULL;
    }
    const unsigned char *b = (const unsigned char *)PyBytes_AS_STRING(args[5]);
    Band band = {b[0], b[1], b[2], b[3], b[4], b[5]};

    Py_buffer image, out, clip;
    int clipped = args[7] != Py_None;
    if (get_image(args[0], &image, 3, 0, "image") < 0)
        return NULL;
    PyObject *result = NULL;
    if (PyObject_GetBuffer(args[6], &out, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) < 0)
        goto release_image;
    if (clipped && get_image(args[7], &clip, 2, 0, "clip") < 0)
        goto release_out;
    if (image.shape[2] != 3) {
        PyErr_SetString(PyExc_ValueError, "image: BGR pixels (3 channels) are needed");
        goto release_clip;
    }
    if (window_inside(&image, x0, y0, cols, rows, "image") < 0
            || (clipped && window_inside(&clip, cx0, cy0, cols, rows, "clip") < 0))
        goto release_clip;
    if (out.len < rows * cols) {
        PyErr_SetString(PyExc_ValueError, "out: smaller than the window");
        goto release_clip;
    }

    Sums sums = {0, 0, 0, 0, 0, 0};
    const Py_ssize_t row_stride = image.strides[0], pixel_stride = image.strides[1];
    unsigned char *mask = (unsigned char *)out.buf;
    for (Py_ssize_t y = 0; y < rows; y++, mask += cols) {
        const unsigned char *pixel = (const unsigned char *)image.buf
            + (y0 + y) * row_stride + x0 * pixel_stride;
        const unsigned char *keep = clipped ? (const unsigned char *)clip.buf
            + (cy0 + y) * clip.strides[0] + cx0 : NULL;
        int64_t n = 0, sx = 0, sxx = 0;
        for (Py_ssize_t x = 0; x < cols; x++, pixel += pixel_stride) {
            int set = (keep == NULL || keep[x]) && in_band(pixel[0], pixel[1], pixel[2], &band);
            mask[x] = set ? 255 : 0;
            if (set) {
                n += 1;
                sx += x;
                sxx += (int64_t)x * x;
            }
        }
        add_row(&sums, y, n, sx, sxx);
    }
    result = sums_tuple(&sums);

release_clip:
    if (clipped)
        PyBuffer_Release(&clip);
release_out:
    PyBuffer_Release(&out);
release_image:
    PyBuffer_Release(&image);
    return result;
}

PyDoc_STRVAR(mask_sums_doc,
"mask_sums(mask) -> sums\n\n"
"The sums (count, x, y, x^2, x y, y^2) over the nonzero pixels of a 2-D uint8 mask, as\n"
"band_mask returns them for its own.");

static PyObject *mask_sums(PyObject *module, PyObject *mask_obj)
{
    (void)module;
    Py_buffer mask;
    if (get_image(mask_obj, &mask, 2, 0, "mask") < 0)
        return NULL;
    Sums sums = {0, 0, 0, 0, 0, 0};
    for (Py_ssize_t y = 0; y < mask.shape[0]; y++) {
        const unsigned char *row = (const unsigned char *)mask.buf + y * mask.strides[0];
        int64_t n = 0, sx = 0, sxx = 0;
        for (Py_ssize_t x = 0; x < mask.shape[1]; x++) {
            if (row[x]) {
                n += 1;
                sx += x;
                sxx += (int64_t)x * x;
            }
        }
        add_row(&sums, y, n, sx, sxx);
    }
    PyBuffer_Release(&mask);
    return sums_tuple(&sums);
}

static PyMethodDef methods[] = {
    {"band_mask", (PyCFunction)(void (*)(void))band_mask, METH_FASTCALL, band_mask_doc},
    {"mask_sums", mask_sums, METH_O, mask_sums_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_band",
    "HSV band mask and its moments for the ball detector (see band_mask).", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__band(void)
{
    init_tables();
    return PyModule_Create(&module_def);
}
