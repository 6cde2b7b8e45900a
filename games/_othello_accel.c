/* The Othello engine's hot primitives in C, for boards of 64 squares or fewer.
 *
 * An optional accelerator of games/othello.py: the same functions as its
 * pure-Python primitives (_fill_moves, _flips, _board_rows, _squares), on the
 * same bitboards (bit row * size + col, row 0 at the top, as plain Python
 * ints), giving the same results; games/othello.py falls back to the pure
 * ones where this module was not built (no compiler at install time) or the
 * board is larger than 8x8. No state, no I/O, no Python objects kept.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

#include "_bitboard_arg.h"

#define MAX_SIZE 8

/* One direction of a dumb7fill: a shift amount and the squares a run may cross. */
typedef struct {
    int shift;
    uint64_t mask;
} Step;

/* Per board size 1..8: the four directions (each used both ways) and the full board. */
typedef struct {
    int ready;
    Step steps[4];
    uint64_t full;
} Geometry;

static Geometry geometries[MAX_SIZE + 1];

static const Geometry *geometry(int size)
{
    Geometry *geo = &geometries[size];
    if (!geo->ready) {
        int squares = size * size;
        uint64_t full = squares == 64 ? ~(uint64_t)0 : (((uint64_t)1 << squares) - 1);
        uint64_t first_col = 0;
        for (int row = 0; row < size; row++)
            first_col |= (uint64_t)1 << (row * size);
        uint64_t last_col = first_col << (size - 1);
        uint64_t inner = full & ~first_col & ~last_col;
        geo->steps[0] = (Step){1, inner};
        geo->steps[1] = (Step){size - 1, inner};
        geo->steps[2] = (Step){size, full};
        geo->steps[3] = (Step){size + 1, inner};
        geo->full = full;
        geo->ready = 1;
    }
    return geo;
}

/* Read a board size argument: an int from 1 to 8. */
static int read_size(PyObject *value, int *size)
{
    long number = PyLong_AsLong(value);
    if (number == -1 && PyErr_Occurred())
        return 0;
    if (number < 1 || number > MAX_SIZE) {
        PyErr_Format(PyExc_ValueError, "the accelerator takes boards of 1 to %d squares a side, not %ld", MAX_SIZE, number);
        return 0;
    }
    *size = (int)number;
    return 1;
}

static uint64_t fill_moves(uint64_t own, uint64_t opp, const Geometry *geo)
{
    uint64_t moves = 0;
    for (int i = 0; i < 4; i++) {
        int shift = geo->steps[i].shift;
        uint64_t crossable = opp & geo->steps[i].mask;
        uint64_t frontier = (own << shift) & crossable, run = frontier;
        while (frontier) {
            frontier = (frontier << shift) & crossable;
            run |= frontier;
        }
        moves |= run << shift;
        frontier = (own >> shift) & crossable;
        run = frontier;
        while (frontier) {
            frontier = (frontier >> shift) & crossable;
            run |= frontier;
        }
        moves |= run >> shift;
    }
    return moves & geo->full & ~(own | opp);
}

PyDoc_STRVAR(moves_doc,
"moves(own, opp, size, /) -> int\n\n"
"The bitboard of empty squares where ``own`` can place a disc on a ``size`` board (1..8):\n"
"games.othello._fill_moves for one board. Raises TypeError for a bitboard that is not an\n"
"int, ValueError for one outside 0 .. 2**64 - 1 or a size out of range.");

static PyObject *moves(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs)
{
    uint64_t own, opp;
    int size;
    if (nargs != 3) {
        PyErr_Format(PyExc_TypeError, "moves() takes 3 arguments (own, opp, size), not %zd", nargs);
        return NULL;
    }
    if (!read_board(args[0], &own) || !read_board(args[1], &opp) || !read_size(args[2], &size))
        return NULL;
    return PyLong_FromUnsignedLongLong(fill_moves(own, opp, geometry(size)));
}

PyDoc_STRVAR(flips_doc,
"flips(index, own, opp, size, /) -> int\n\n"
"The ``opp`` discs flipped when ``own`` places on square ``index`` (row * size + col)\n"
"of a ``size`` board (1..8): games.othello._flips. Zero when it flanks nothing.\n"
"Raises ValueError for an index off the board, and as moves() for the rest.");

static PyObject *flips(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs)
{
    static const int directions[8][2] = {{0, 1}, {0, -1}, {1, 0}, {-1, 0}, {1, 1}, {1, -1}, {-1, 1}, {-1, -1}};
    uint64_t own, opp, flipped = 0;
    int size;
    if (nargs != 4) {
        PyErr_Format(PyExc_TypeError, "flips() takes 4 arguments (index, own, opp, size), not %zd", nargs);
        return NULL;
    }
    long index = PyLong_AsLong(args[0]);
    if (index == -1 && PyErr_Occurred())
        return NULL;
    if (!read_board(args[1], &own) || !read_board(args[2], &opp) || !read_size(args[3], &size))
        return NULL;
    if (index < 0 || index >= size * size) {
        PyErr_Format(PyExc_ValueError, "square %ld is off a %dx%d board", index, size, size);
        return NULL;
    }
    int row = (int)index / size, col = (int)index % size;
    for (int d = 0; d < 8; d++) {
        int r = row + directions[d][0], c = col + directions[d][1];
        uint64_t run = 0;
        while (r >= 0 && r < size && c >= 0 && c < size) {
            uint64_t square = (uint64_t)1 << (r * size + c);
            if (!(opp & square)) {
                if (run && (own & square))
                    flipped |= run;
                break;
            }
            run |= square;
            r += directions[d][0];
            c += directions[d][1];
        }
    }
    return PyLong_FromUnsignedLongLong(flipped);
}

PyDoc_STRVAR(rows_doc,
"rows(black, white, texts, /) -> tuple[str, ...]\n\n"
"An 8x8 board's eight rows, top first: ``texts[black byte][white byte]`` for each row\n"
"(games.othello._Geometry.row_texts), as games.othello._board_rows. Raises TypeError\n"
"if ``texts`` is not a tuple of 256 tuples of 256 items.");

static PyObject *rows(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs)
{
    uint64_t black, white;
    if (!read_black_white(args, nargs, 3, "rows() takes 3 arguments (black, white, texts)", &black, &white))
        return NULL;
    PyObject *texts = args[2];
    if (!PyTuple_Check(texts) || PyTuple_GET_SIZE(texts) != 256) {
        PyErr_SetString(PyExc_TypeError, "rows() needs texts: a tuple of 256 tuples of 256 row texts");
        return NULL;
    }
    PyObject *result = PyTuple_New(8);
    if (result == NULL)
        return NULL;
    for (int row = 0; row < 8; row++) {
        PyObject *by_white = PyTuple_GET_ITEM(texts, (black >> (8 * row)) & 255);
        if (!PyTuple_Check(by_white) || PyTuple_GET_SIZE(by_white) != 256) {
            Py_DECREF(result);
            PyErr_SetString(PyExc_TypeError, "rows() needs texts: a tuple of 256 tuples of 256 row texts");
            return NULL;
        }
        PyObject *text = PyTuple_GET_ITEM(by_white, (white >> (8 * row)) & 255);
        Py_INCREF(text);
        PyTuple_SET_ITEM(result, row, text);
    }
    return result;
}

PyDoc_STRVAR(squares_doc,
"squares(bitboard, names, /) -> tuple[str, ...]\n\n"
"The names of the squares set in ``bitboard``, in board order (lowest bit first):\n"
"``names[i]`` for each set bit ``i``, as games.othello._squares. Raises TypeError if\n"
"``names`` is not a tuple, ValueError if a set bit has no name.");

static PyObject *squares(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs)
{
    uint64_t board;
    if (nargs != 2) {
        PyErr_Format(PyExc_TypeError, "squares() takes 2 arguments (bitboard, names), not %zd", nargs);
        return NULL;
    }
    if (!read_board(args[0], &board))
        return NULL;
    PyObject *names = args[1];
    if (!PyTuple_Check(names)) {
        PyErr_SetString(PyExc_TypeError, "squares() needs names: a tuple of square names by bit");
        return NULL;
    }
    if (board && 63 - __builtin_clzll(board) >= PyTuple_GET_SIZE(names)) {
        PyErr_Format(PyExc_ValueError, "square %d has no name (%zd names)", 63 - __builtin_clzll(board),
                     PyTuple_GET_SIZE(names));
        return NULL;
    }
    PyObject *result = PyTuple_New(__builtin_popcountll(board));
    if (result == NULL)
        return NULL;
    for (Py_ssize_t i = 0; board; i++, board &= board - 1) {
        PyObject *name = PyTuple_GET_ITEM(names, __builtin_ctzll(board));
        Py_INCREF(name);
        PyTuple_SET_ITEM(result, i, name);
    }
    return result;
}

static PyMethodDef methods[] = {
    {"moves", (PyCFunction)(void (*)(void))moves, METH_FASTCALL, moves_doc},
    {"flips", (PyCFunction)(void (*)(void))flips, METH_FASTCALL, flips_doc},
    {"rows", (PyCFunction)(void (*)(void))rows, METH_FASTCALL, rows_doc},
    {"squares", (PyCFunction)(void (*)(void))squares, METH_FASTCALL, squares_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    "games._othello_accel",
    "The Othello engine's move generation, flips, board rows and move names in C (boards up to 8x8).",
    -1,
    methods,
    NULL,
    NULL,
    NULL,
    NULL,
};

PyMODINIT_FUNC PyInit__othello_accel(void)
{
    return PyModule_Create(&module);
}
