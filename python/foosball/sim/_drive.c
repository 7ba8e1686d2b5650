/* The drive law of foosball/sim/drives.py (AxisBank._advance) in one call: up to a step's
 * ticks of one axis, bang-bang on the jerk.
 *
 * Why C: the simulator advances every moving axis (up to 16) every step, a few ticks each,
 * trying up to six candidate jerks per tick; in Python that was about a tenth of a whole
 * match's time (issue 30). Here the same arithmetic costs about a tenth of that.
 *
 * Bit for bit the same as the Python law: the same IEEE double operations (+, -, *, /,
 * sqrt, fabs, copysign, comparisons) in the same order, each rounded on its own (built
 * with -ffp-contract=off: no fused multiply-adds; x86-64 and aarch64 doubles have no excess
 * precision). tests/sim/test_drive_law.py compares the two on random and on match states;
 * drives.py uses the Python law where this module is not built.
 *
 * advance(position, velocity, accel, i, target, cap, tick) -> bool
 *   position, velocity, accel: the bank's lists (item i is read and written);
 *   tick: drives._Tick (ticks, dt, amax_dt, jmax_dt, land_moving, land_rest, h2, h6,
 *   tolerance, snap_speed, amax, jmax, knee, inv_sqrt_jerk, low, high).
 *   True when the axis has come to rest on its target. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>

#define TICK_FIELDS 16

static const double MOVING[] = {1.0, 0.25, 0.0, -1.0};
static const double FROM_REST[] = {1.0, 0.25, 1.0 / 16, 1.0 / 64, 0.0, -1.0};

static int get_double(PyObject *item, double *out)
{
    *out = PyFloat_AsDouble(item);
    return !(*out == -1.0 && PyErr_Occurred());
}

static int store(PyObject *list, Py_ssize_t i, double value)
{
    PyObject *item = PyFloat_FromDouble(value);
    if (item == NULL)
        return -1;
    return PyList_SetItem(list, i, item); /* steals the reference */
}

static PyObject *finish(PyObject *const *args, Py_ssize_t i, double p, double v, double a,
                        int done)
{
    if (store(args[0], i, p) < 0 || store(args[1], i, v) < 0 || store(args[2], i, a) < 0)
        return NULL;
    return PyBool_FromLong(done);
}

static PyObject *advance(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 7) {
        PyErr_SetString(PyExc_TypeError, "advance takes 7 arguments");
        return NULL;
    }
    for (int k = 0; k < 3; k++) {
        if (!PyList_Check(args[k])) {
            PyErr_SetString(PyExc_TypeError, "position, velocity, accel must be lists");
            return NULL;
        }
    }
    Py_ssize_t i = PyLong_AsSsize_t(args[3]);
    if (i == -1 && PyErr_Occurred())
        return NULL;
    if (i < 0 || i >= PyList_GET_SIZE(args[0]) || i >= PyList_GET_SIZE(args[1])
            || i >= PyList_GET_SIZE(args[2])) {
        PyErr_SetString(PyExc_IndexError, "axis index out of range");
        return NULL;
    }
    PyObject *tick = args[6];
    if (!PyTuple_Check(tick) || PyTuple_GET_SIZE(tick) != TICK_FIELDS) {
        PyErr_SetString(PyExc_TypeError, "tick must be a tuple of 16");
        return NULL;
    }
    long ticks = PyLong_AsLong(PyTuple_GET_ITEM(tick, 0));
    if (ticks == -1 && PyErr_Occurred())
        return NULL;
    double c[TICK_FIELDS];
    for (int k = 1; k < TICK_FIELDS; k++) {
        if (!get_double(PyTuple_GET_ITEM(tick, k), &c[k]))
            return NULL;
    }
    double p, v, a, target, cap;
    if (!get_double(PyList_GET_ITEM(args[0], i), &p)
            || !get_double(PyList_GET_ITEM(args[1], i), &v)
            || !get_double(PyList_GET_ITEM(args[2], i), &a)
            || !get_double(args[4], &target) || !get_double(args[5], &cap))
        return NULL;
    const double dt = c[1], amax_dt = c[2], jmax_dt = c[3], land_moving = c[4],
                 land_rest = c[5], h2 = c[6], h6 = c[7], tolerance = c[8], snap_speed = c[9],
                 amax = c[10], jmax = c[11], knee = c[12], inv_sqrt_jerk = c[13],
                 low = c[14], high = c[15];
    const double two_amax = 2 * amax;
    const double two_jmax = 2 * jmax;
    for (long n = 0; n < ticks; n++) {
        double error = target - p;
        double direction = error > 0 ? 1.0 : error < 0 ? -1.0 : 0.0;
        /* land: the remainder is within what one tick of braking resolves */
        if (direction * v >= 0
                && fabs(v) <= amax_dt
                && fabs(a) <= jmax_dt
                && fabs(error) <= fabs(v) * dt + (v != 0 ? land_moving : land_rest))
            return finish(args, i, target, 0.0, 0.0, 1);
        double push = direction * jmax;
        int at_rest = v == 0.0 && a == 0.0;
        const double *scales = at_rest ? FROM_REST : MOVING;
        int count = at_rest ? 6 : 4;
        double jerk = 0.0, p_new = 0.0, v_new = 0.0, a_new = 0.0;
        double v_coast = v + a * dt;
        double p_coast = p + v * dt + a * h2;
        for (int k = 0; k < count; k++) {
            double scale = scales[k];
            jerk = push * scale;
            a_new = a + jerk * dt;
            if (a_new > amax)
                a_new = amax;
            else if (a_new < -amax)
                a_new = -amax;
            double j = (a_new - a) / dt;
            v_new = v_coast + j * h2;
            p_new = p_coast + j * h6;
            if (scale < 0.0)
                break;
            double ramp = fabs(a_new) / jmax;
            double toward = direction * (v_new + a_new * ramp / 2);
            if (toward > cap)
                continue;
            double left = direction * (target - (p_new + v_new * ramp + a_new * ramp * ramp / 3));
            double stop;
            if (toward <= 0)
                stop = -toward * dt;
            else if (toward < knee)
                stop = toward * sqrt(toward) * inv_sqrt_jerk + toward * dt;
            else
                stop = toward * toward / two_amax + toward * amax / two_jmax + toward * dt;
            if (left >= stop)
                break;
        }
        if (at_rest && jerk * direction <= 0.0)
            /* even the gentlest push would overshoot: what is left is below resolution */
            return finish(args, i, target, 0.0, 0.0, 1);
        if (fabs(v_new) > cap) {
            v_new = copysign(cap, v_new);
            a_new = 0.0;
        }
        if (fabs(target - p_new) < tolerance && fabs(v_new) < snap_speed
                && fabs(a_new) <= jmax_dt)
            return finish(args, i, target, 0.0, 0.0, 1);
        p = p_new > high ? high : p_new < low ? low : p_new;
        v = v_new;
        a = a_new;
    }
    return finish(args, i, p, v, a, 0);
}

static PyMethodDef methods[] = {
    {"advance", (PyCFunction)(void (*)(void))advance, METH_FASTCALL,
     "advance(position, velocity, accel, i, target, cap, tick) -> bool: up to tick.ticks "
     "ticks of axis i (drives.AxisBank._advance); True when it has come to rest."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_drive", "The drive law of foosball.sim.drives in C.", -1,
    methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__drive(void)
{
    return PyModule_Create(&module);
}
