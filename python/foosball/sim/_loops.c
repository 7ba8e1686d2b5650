/* The simulator's two hottest loops in C, each the twin of a Python function that stays
 * (and runs where this module is not built):
 *
 * - advance: the drive law of foosball/sim/drives.py (AxisBank._advance): up to a step's
 *   ticks of one axis, bang-bang on the jerk;
 * - rod_hit: the ball's ray cast against one rod's men of foosball/sim/physics.py
 *   (World._rod_hit with its _pose_at, _box_hit and _circle_entry).
 *
 * Why C: in Python these were about a tenth of a whole match's time each (issue 30: the
 * simulator advances every moving axis every step, a few ticks each, trying up to six
 * candidate jerks per tick; and casts the ball's ray at every rod it may reach, in pieces,
 * at every man). Here they cost a fraction of that.
 *
 * Bit for bit the same as the Python: the same IEEE double operations (+, -, *, /, sqrt,
 * fabs, copysign, ceil, comparisons, and libm's sin and cos, which Python's math module
 * calls too) in the same order, each rounded on its own (built with -ffp-contract=off: no
 * fused multiply-adds; x86-64 and aarch64 doubles have no excess precision); Python's
 * min/max picks written out as it makes them (the first of equals); math.hypot, which is
 * not libm's, called as Python's. tests/sim/test_sim_loops.py compares each with its
 * Python twin on random states and whole matches.
 *
 * advance(position, velocity, accel, i, target, cap, tick) -> bool
 *   position, velocity, accel: the bank's lists (item i is read and written);
 *   tick: drives._Tick (ticks, dt, amax_dt, jmax_dt, land_moving, land_rest, h2, h6,
 *   tolerance, snap_speed, amax, jmax, knee, inv_sqrt_jerk, low, high).
 *   True when the axis has come to rest on its target.
 *
 * rod_hit(...) -> None | (time, normal_x, normal_y, man, surface_vx, surface_vy,
 *   face_speed, depth): see physics.World._rod_hit, which passes its arguments. */

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
            if (dt == 0.0) /* where Python's law raises (a step of no length) */
                return PyErr_Format(PyExc_ZeroDivisionError, "float division by zero");
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


/* --- the ray cast against a rod's men ------------------------------------------------- */

static PyObject *py_hypot; /* math.hypot: Python's own, not libm's */

/* Python's max(a, b) and min(a, b): the first unless the second is greater (smaller) */
static inline double py_max(double a, double b) { return b > a ? b : a; }
static inline double py_min(double a, double b) { return b < a ? b : a; }

static int hypot_of(double x, double y, double *out)
{
    PyObject *args[2] = {PyFloat_FromDouble(x), PyFloat_FromDouble(y)};
    if (args[0] == NULL || args[1] == NULL) {
        Py_XDECREF(args[0]);
        Py_XDECREF(args[1]);
        return 0;
    }
    PyObject *result = PyObject_Vectorcall(py_hypot, args, 2, NULL);
    Py_DECREF(args[0]);
    Py_DECREF(args[1]);
    if (result == NULL)
        return 0;
    *out = PyFloat_AsDouble(result);
    Py_DECREF(result);
    return !(*out == -1.0 && PyErr_Occurred());
}

/* physics._circle_entry; returns 0 for None, 1 with *time set */
static int circle_entry(double dx, double dy, double wx, double wy, double radius,
                        double *time)
{
    double c = dx * dx + dy * dy - radius * radius;
    double b = dx * wx + dy * wy;
    if (c <= 0.0) {
        if (b < 0.0) {
            *time = 0.0;
            return 1;
        }
        return 0;
    }
    if (b >= 0.0)
        return 0;
    double a = wx * wx + wy * wy;
    double disc = b * b - a * c;
    if (disc < 0.0 || a <= 0.0)
        return 0;
    *time = (-b - sqrt(disc)) / a;
    return 1;
}

typedef struct {
    int found;
    double time, nx, ny, face_speed, depth;
} Hit;

static inline void consider(Hit *best, double span, double time, double nx, double ny,
                            double face_speed)
{
    if (0.0 <= time && time <= span && (!best->found || time < best->time)) {
        best->found = 1;
        best->time = time;
        best->nx = nx;
        best->ny = ny;
        best->face_speed = face_speed;
        best->depth = 0.0;
    }
}

/* physics._box_hit; returns 0 on a Python error */
static int box_hit(double px, double py, double vx, double vy, double span,
                   const double box_a[4], const double box_b[4], double radius, Hit *best)
{
    double xl0 = box_a[0], xh0 = box_a[1], yl0 = box_a[2], yh0 = box_a[3];
    double xl1 = box_b[0], xh1 = box_b[1], yl1 = box_b[2], yh1 = box_b[3];
    double inv = 1.0 / span;
    double dxl = (xl1 - xl0) * inv, dxh = (xh1 - xh0) * inv, dyl = (yl1 - yl0) * inv,
           dyh = (yh1 - yh0) * inv;
    /* max(0.0, min(radius, (yh0 - yl0) / 2, (yh1 - yl1) / 2)) */
    double rho = py_max(0.0, py_min(py_min(radius, (yh0 - yl0) / 2), (yh1 - yl1) / 2));
    double mid0 = (xl0 + xh0) / 2;
    double cxl0 = py_min(xl0 + rho, mid0), cxh0 = py_max(xh0 - rho, mid0);
    best->found = 0;
    best->time = 0.0;
    if (xl0 < px && px < xh0 && yl0 + rho < py && py < yh0 - rho) {
        best->found = 1;
        best->time = 0.0;
        best->ny = 0.0;
        if (px - xl0 < xh0 - px) {
            best->nx = -1.0;
            best->face_speed = py_max(0.0, -dxl);
            best->depth = px - xl0;
        } else {
            best->nx = 1.0;
            best->face_speed = py_max(0.0, dxh);
            best->depth = xh0 - px;
        }
        return 1;
    }
    double qx = py_min(py_max(px, cxl0), cxh0);
    double qy = py_min(py_max(py, yl0 + rho), yh0 - rho);
    double ex = px - qx, ey = py - qy;
    double gap;
    if (!hypot_of(ex, ey, &gap))
        return 0;
    if (gap < rho) {
        if (gap < 1e-12) {
            if (py >= (yl0 + yh0) / 2) {
                ex = 0.0; ey = 1.0; gap = 1.0;
            } else {
                ex = 0.0; ey = -1.0; gap = 1.0;
            }
        }
        double nx = ex / gap, ny = ey / gap;
        double speed = py_max(0.0, (nx < 0 ? dxl : dxh) * nx + (ny < 0 ? dyl : dyh) * ny);
        best->found = 1;
        best->time = 0.0;
        best->nx = nx;
        best->ny = ny;
        best->face_speed = speed;
        best->depth = rho - gap;
        return 1;
    }
    /* x faces (valid along the straight part of the y extent) */
    {
        const double x0s[2] = {xl0, xh0}, dxs[2] = {dxl, dxh}, normals[2] = {-1.0, 1.0};
        for (int k = 0; k < 2; k++) {
            double x0 = x0s[k], dx = dxs[k], normal = normals[k];
            double rel = vx - dx;
            double g = px - x0;
            if (g * normal >= 0.0 && rel * normal < 0.0) {
                double time = -g / rel;
                double y = py + vy * time;
                if (yl0 + dyl * time + rho <= y && y <= yh0 + dyh * time - rho)
                    consider(best, span, time, normal, 0.0, py_max(0.0, dx * normal));
            }
        }
    }
    {
        const double y0s[2] = {yl0, yh0}, dys[2] = {dyl, dyh}, normals[2] = {-1.0, 1.0};
        for (int k = 0; k < 2; k++) {
            double y0 = y0s[k], dy = dys[k], normal = normals[k];
            double rel = vy - dy;
            double g = py - y0;
            if (g * normal >= 0.0 && rel * normal < 0.0) {
                double time = -g / rel;
                double x = px + vx * time;
                if (xl0 + dxl * time + rho <= x && x <= xh0 + dxh * time - rho)
                    consider(best, span, time, 0.0, normal, py_max(0.0, dy * normal));
            }
        }
    }
    if (rho > 0.0) {
        double mid1 = (xl1 + xh1) / 2;
        double cxl1 = py_min(xl1 + rho, mid1), cxh1 = py_max(xh1 - rho, mid1);
        const double cx0s[2] = {cxl0, cxh0};
        const double cdxs[2] = {(cxl1 - cxl0) * inv, (cxh1 - cxh0) * inv};
        const double sxs[2] = {-1.0, 1.0};
        const double cy0s[2] = {yl0 + rho, yh0 - rho}, cdys[2] = {dyl, dyh};
        const double sys_[2] = {-1.0, 1.0};
        for (int u = 0; u < 2; u++) {
            double cx0 = cx0s[u], cdx = cdxs[u], sx = sxs[u];
            for (int w = 0; w < 2; w++) {
                double cy0 = cy0s[w], cdy = cdys[w], sy = sys_[w];
                double time;
                if (!circle_entry(px - cx0, py - cy0, vx - cdx, vy - cdy, rho, &time)
                        || (best->found && time >= best->time))
                    continue;
                double hx = px + vx * time - (cx0 + cdx * time);
                double hy = py + vy * time - (cy0 + cdy * time);
                if (hx * sx < 0.0 || hy * sy < 0.0)
                    continue; /* not in this corner's quadrant: a face handles it */
                double norm;
                if (!hypot_of(hx, hy, &norm))
                    return 0;
                if (norm == 0.0)
                    norm = 1.0;
                double nx = hx / norm, ny = hy / norm;
                consider(best, span, time, nx, ny, py_max(0.0, cdx * nx + cdy * ny));
            }
        }
    }
    return 1;
}

typedef struct {
    double t0, r0, vt0, vr0, t1, r1, vt1, vr1;
} Pose;

/* World._pose_at: (translation, rotation, v_t, v_r) at fraction s of the step */
static void pose_at(const Pose *q, double s, double dt, double out[4])
{
    double s2 = s * s, s3 = s * s * s;
    double h00 = 2 * s3 - 3 * s2 + 1, h10 = s3 - 2 * s2 + s, h01 = -2 * s3 + 3 * s2,
           h11 = s3 - s2;
    double d00 = 6 * s2 - 6 * s, d10 = 3 * s2 - 4 * s + 1, d01 = -6 * s2 + 6 * s,
           d11 = 3 * s2 - 2 * s;
    out[0] = h00 * q->t0 + h10 * dt * q->vt0 + h01 * q->t1 + h11 * dt * q->vt1;
    out[1] = h00 * q->r0 + h10 * dt * q->vr0 + h01 * q->r1 + h11 * dt * q->vr1;
    out[2] = (d00 * q->t0 + d01 * q->t1) / dt + d10 * q->vt0 + d11 * q->vt1;
    out[3] = (d00 * q->r0 + d01 * q->r1) / dt + d10 * q->vr0 + d11 * q->vr1;
}

/* man_interval(rotation) through its memo: 0 on error; *none for None, else lo, hi */
static int interval_of(PyObject *known, PyObject *man_interval, double rotation, int *none,
                       double *lo, double *hi)
{
    PyObject *key = PyFloat_FromDouble(rotation);
    if (key == NULL)
        return 0;
    PyObject *value = PyDict_GetItemWithError(known, key); /* borrowed */
    if (value == NULL) {
        if (PyErr_Occurred()) {
            Py_DECREF(key);
            return 0;
        }
        value = PyObject_CallOneArg(man_interval, key); /* new (and kept in the memo) */
    } else {
        Py_INCREF(value);
    }
    Py_DECREF(key);
    if (value == NULL)
        return 0;
    int ok = 1;
    if (value == Py_None) {
        *none = 1;
    } else if (!PyTuple_Check(value) || PyTuple_GET_SIZE(value) != 2) {
        PyErr_SetString(PyExc_TypeError, "man_interval must give None or (lo, hi)");
        ok = 0;
    } else {
        *none = 0;
        ok = get_double(PyTuple_GET_ITEM(value, 0), lo)
            && get_double(PyTuple_GET_ITEM(value, 1), hi);
    }
    Py_DECREF(value);
    return ok;
}

#define ROD_HIT_ARGS 23

/* World._rod_hit. Arguments: the pose's t0, r0, vt0, vr0, t1, r1, vt1, vr1; rod_x; the
 * men's offsets (a list); the ball's x, y; t_start, horizon, dt, vx, vy; the man's height,
 * reach, half_width; the ball's radius; the man_interval memo (dict) and man_interval. */
static PyObject *rod_hit(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != ROD_HIT_ARGS) {
        PyErr_SetString(PyExc_TypeError, "rod_hit takes 23 arguments");
        return NULL;
    }
    double x[9];
    Pose q;
    for (int k = 0; k < 9; k++) {
        if (!get_double(args[k], &x[k]))
            return NULL;
    }
    q.t0 = x[0]; q.r0 = x[1]; q.vt0 = x[2]; q.vr0 = x[3];
    q.t1 = x[4]; q.r1 = x[5]; q.vt1 = x[6]; q.vr1 = x[7];
    double rod_x = x[8];
    PyObject *offsets = args[9];
    if (!PyList_Check(offsets)) {
        PyErr_SetString(PyExc_TypeError, "offsets must be a list");
        return NULL;
    }
    double v[11];
    for (int k = 0; k < 11; k++) {
        if (!get_double(args[10 + k], &v[k]))
            return NULL;
    }
    double ball_x = v[0], ball_y = v[1], t_start = v[2], horizon = v[3], dt = v[4],
           vx = v[5], vy = v[6], height = v[7], reach = v[8], half_width = v[9], r = v[10];
    PyObject *known = args[21], *man_interval = args[22];
    if (!PyDict_Check(known)) {
        PyErr_SetString(PyExc_TypeError, "the memo must be a dict");
        return NULL;
    }
    if (dt == 0.0) /* where World._rod_hit raises */
        return PyErr_Format(PyExc_ZeroDivisionError, "float division by zero");
    double s_a = t_start / dt;
    double s_b = (t_start + horizon) / dt;
    double turn = fabs(q.r1 - q.r0) + (fabs(q.vr0) + fabs(q.vr1)) * dt * 0.25;
    double wanted = ceil(turn * (s_b - s_a) / 0.08); /* MAX_SLICE_ANGLE */
    if (!(wanted < 1e9)) { /* also NaN: Python's ceil would raise, or count for ever */
        PyErr_SetString(PyExc_OverflowError, "too many pieces");
        return NULL;
    }
    long pieces = wanted > 1 ? (long)wanted : 1;
    double pa[4], pb[4];
    pose_at(&q, s_a, dt, pa);
    int none_a, none_b;
    double a_lo = 0, a_hi = 0, b_lo = 0, b_hi = 0;
    if (!interval_of(known, man_interval, pa[1], &none_a, &a_lo, &a_hi))
        return NULL;
    double half_y = half_width + r;
    double piece = horizon / (double)pieces;
    Py_ssize_t men = PyList_GET_SIZE(offsets);
    for (long k = 0; k < pieces; k++) {
        double tau_a = (double)k * piece;
        double tau_b = tau_a + piece;
        pose_at(&q, (t_start + tau_b) / dt, dt, pb);
        if (!interval_of(known, man_interval, pb[1], &none_b, &b_lo, &b_hi))
            return NULL;
        if (!none_a || !none_b) {
            if (none_a) {
                double tip = reach * sin(pa[1]);
                a_lo = a_hi = tip;
                none_a = 0;
            }
            if (none_b) {
                double tip = reach * sin(pb[1]);
                b_lo = b_hi = tip;
                none_b = 0;
            }
            double bx = ball_x + vx * tau_a, by = ball_y + vy * tau_a;
            Hit best = {0, 0, 0, 0, 0, 0};
            long best_man = -1;
            for (Py_ssize_t j = 0; j < men; j++) {
                double offset;
                if (!get_double(PyList_GET_ITEM(offsets, j), &offset))
                    return NULL;
                double ya = pa[0] + offset, yb = pb[0] + offset;
                if (piece == 0.0) /* where World._rod_hit raises (a slice of no length) */
                    return PyErr_Format(PyExc_ZeroDivisionError, "float division by zero");
                if (fabs(by - ya) > half_y + fabs(vy - (yb - ya) / piece) * piece + 1e-3)
                    continue;
                double box_a[4] = {rod_x + a_lo, rod_x + a_hi, ya - half_y, ya + half_y};
                double box_b[4] = {rod_x + b_lo, rod_x + b_hi, yb - half_y, yb + half_y};
                Hit hit;
                if (!box_hit(bx, by, vx, vy, piece, box_a, box_b, r, &hit))
                    return NULL;
                if (hit.found && (!best.found || hit.time < best.time)) {
                    best = hit;
                    best_man = (long)j;
                }
            }
            if (best.found) {
                double f = best.time / piece;
                double rot_velocity = pa[3] + (pb[3] - pa[3]) * f;
                double rot_hit = pa[1] + (pb[1] - pa[1]) * f;
                double tip_z = height - reach * cos(rot_hit);
                double lever = height - py_max(r, tip_z);
                double surface_vx = rot_velocity * lever;
                double surface_vy = pa[2] + (pb[2] - pa[2]) * f;
                return Py_BuildValue("(dddldddd)", best.time + tau_a, best.nx, best.ny,
                                     best_man, surface_vx, surface_vy, best.face_speed,
                                     best.depth);
            }
        }
        pa[0] = pb[0]; pa[1] = pb[1]; pa[2] = pb[2]; pa[3] = pb[3];
        none_a = none_b; a_lo = b_lo; a_hi = b_hi;
    }
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"advance", (PyCFunction)(void (*)(void))advance, METH_FASTCALL,
     "advance(position, velocity, accel, i, target, cap, tick) -> bool: up to tick.ticks "
     "ticks of axis i (drives.AxisBank._advance); True when it has come to rest."},
    {"rod_hit", (PyCFunction)(void (*)(void))rod_hit, METH_FASTCALL,
     "rod_hit(t0, r0, vt0, vr0, t1, r1, vt1, vr1, rod_x, offsets, ball_x, ball_y, "
     "t_start, horizon, dt, vx, vy, height, reach, half_width, radius, memo, man_interval) "
     "-> None | (time, nx, ny, man, surface_vx, surface_vy, face_speed, depth): "
     "physics.World._rod_hit."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_loops", "The simulator's drive law and rod ray cast in C (see _loops.c).", -1,
    methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__loops(void)
{
    PyObject *math = PyImport_ImportModule("math");
    if (math == NULL)
        return NULL;
    py_hypot = PyObject_GetAttrString(math, "hypot");
    Py_DECREF(math);
    if (py_hypot == NULL)
        return NULL;
    return PyModule_Create(&module);
}
