/* Reading a bitboard argument from Python, shared by the C extensions that take Othello bitboards:
 * games/_othello_accel.c and server/tables/_othello_views.c (setup.py puts games/ on the latter's include path). */
#ifndef PARLOUR_BITBOARD_ARG_H
#define PARLOUR_BITBOARD_ARG_H

#include <Python.h>
#include <stdint.h>

/* Read a bitboard argument: a non-negative int below 2**64 (else an exception is set and 0 returned).
 * Checked by sign and bit count, then read digit by digit: PyLong_AsUnsignedLongLong goes through a byte
 * array and costs several times as much, and a move reads about eight bitboards. */
static inline int read_board(PyObject *value, uint64_t *board)
{
    if (!PyLong_Check(value)) {
        PyErr_Format(PyExc_TypeError, "a bitboard must be an int, not %.100s", Py_TYPE(value)->tp_name);
        return 0;
    }
    if (_PyLong_Sign(value) < 0 || _PyLong_NumBits(value) > 64) {
        PyErr_Format(PyExc_ValueError, "a bitboard must be an int from 0 to 2**64 - 1, not %R", value);
        return 0;
    }
    *board = PyLong_AsUnsignedLongLongMask(value);
    return 1;
}

/* The opening of a function whose first two arguments are the black and white bitboards: ``nargs`` must be
 * ``wanted`` (else TypeError naming ``call``, such as "rows() takes 3 arguments (black, white, texts)"), then
 * both boards are read. 0 with an exception set on failure. */
static inline int read_black_white(PyObject *const *args, Py_ssize_t nargs, Py_ssize_t wanted, const char *call,
                                   uint64_t *black, uint64_t *white)
{
    if (nargs != wanted) {
        PyErr_Format(PyExc_TypeError, "%s, not %zd", call, nargs);
        return 0;
    }
    return read_board(args[0], black) && read_board(args[1], white);
}

#endif
