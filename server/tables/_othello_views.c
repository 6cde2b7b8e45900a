/* The view of an 8x8 Othello position in a game that goes on, encoded as MessagePack, in C.
 *
 * An optional accelerator of server/tables/othello_views.py: every move of an
 * Othello game sends its new position to both seats and every spectator, and
 * building that view as a dict (games.othello.OthelloState.view) and encoding
 * it costs about a quarter of a move's work on the server. This writes the
 * same bytes as msgspec's encoding of that dict straight from the bitboards:
 * the keys in the same order, every value in MessagePack's shortest form, as
 * msgspec writes it (tests/server/test_othello_views.py holds them equal on
 * positions of random games). No state, no I/O, no Python objects kept.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "_bitboard_arg.h" /* games/, on this extension's include path (setup.py) */

/* Longer than any view: 9 + 1 entries, eight rows of 9 bytes, and at most 64 legal moves of 31 bytes. */
#define CAPACITY 4096

typedef struct {
    unsigned char bytes[CAPACITY];
    Py_ssize_t size;
} Writer;

static void put(Writer *out, const void *data, Py_ssize_t size)
{
    memcpy(out->bytes + out->size, data, (size_t)size);
    out->size += size;
}

#define PUT_LITERAL(out, text) put((out), (text), (Py_ssize_t)sizeof(text) - 1)

/* A non-negative int, as MessagePack's shortest form (msgspec's choice). */
static void put_uint(Writer *out, uint64_t value)
{
    unsigned char head[9];
    if (value < 128) {
        head[0] = (unsigned char)value;
        put(out, head, 1);
    } else if (value < 256) {
        head[0] = 0xcc, head[1] = (unsigned char)value;
        put(out, head, 2);
    } else if (value < 65536) {
        head[0] = 0xcd, head[1] = (unsigned char)(value >> 8), head[2] = (unsigned char)value;
        put(out, head, 3);
    } else if (value < ((uint64_t)1 << 32)) {
        head[0] = 0xce;
        for (int i = 0; i < 4; i++)
            head[1 + i] = (unsigned char)(value >> (24 - 8 * i));
        put(out, head, 5);
    } else {
        head[0] = 0xcf;
        for (int i = 0; i < 8; i++)
            head[1 + i] = (unsigned char)(value >> (56 - 8 * i));
        put(out, head, 9);
    }
}

/* A str of fewer than 32 UTF-8 bytes (a fixstr); 0 with ValueError set for a longer one. */
static int put_short_str(Writer *out, PyObject *text, const char *what)
{
    Py_ssize_t size;
    const char *data = PyUnicode_AsUTF8AndSize(text, &size);
    if (data == NULL)
        return 0;
    if (size >= 32) {
        PyErr_Format(PyExc_ValueError, "%s must be shorter than 32 bytes, not %zd", what, size);
        return 0;
    }
    unsigned char head = (unsigned char)(0xa0 | size);
    put(out, &head, 1);
    put(out, data, size);
    return 1;
}

/* By a row's byte of discs (bit c: column c): the eight columns' offsets from '.' as one word, byte c for column c. */
static uint64_t black_offsets[256], white_offsets[256];

static void fill_offsets(void)
{
    for (int byte = 0; byte < 256; byte++) {
        uint64_t black = 0, white = 0;
        for (int c = 0; c < 8; c++) {
            if (byte >> c & 1) {
                black |= (uint64_t)('X' - '.') << (8 * c);
                white |= (uint64_t)('O' - '.') << (8 * c);
            }
        }
        black_offsets[byte] = black;
        white_offsets[byte] = white;
    }
}

/* The eight rows, top first: 'X' for black, 'O' for white, '.' for empty (games.othello's board texts).
 * A row's text is '.' in every byte plus each colour's offsets (black and white never share a square). */
static void put_rows(Writer *out, uint64_t black, uint64_t white)
{
    unsigned char *row = out->bytes + out->size;
    for (int r = 0; r < 8; r++, row += 9) {
        uint64_t text = 0x2e2e2e2e2e2e2e2eULL + black_offsets[(black >> (8 * r)) & 255] + white_offsets[(white >> (8 * r)) & 255];
        row[0] = 0xa8;
        for (int c = 0; c < 8; c++)
            row[1 + c] = (unsigned char)(text >> (8 * c));
    }
    out->size += 72;
}

PyDoc_STRVAR(view_doc,
"view(black, white, ply, to_move, last_move, legal_moves, /) -> bytes\n\n"
"The MessagePack map of OthelloState.view(seat) for an 8x8 position that is not over and\n"
"whose side to move can place a disc: ``black`` and ``white`` bitboards (bit 8 * row + col,\n"
"row 0 at the top), ``ply`` (an int from 0), ``to_move`` (0 or 1), ``last_move`` (a square's\n"
"name, \"pass\" or None) and ``legal_moves`` (None for a view without them, else a tuple or\n"
"list of square names, put last). Raises TypeError for an argument of the wrong type and\n"
"ValueError for one out of range (a bitboard past 64 bits, black and white overlapping, a\n"
"negative ply, a name of 32 bytes or more, more than 64 legal moves).");

static PyObject *view(PyObject *Py_UNUSED(module), PyObject *const *args, Py_ssize_t nargs)
{
    uint64_t black, white;
    if (!read_black_white(args, nargs, 6, "view() takes 6 arguments (black, white, ply, to_move, last_move, legal_moves)", &black, &white))
        return NULL;
    if (black & white) {
        PyErr_SetString(PyExc_ValueError, "black and white share a square");
        return NULL;
    }
    if (!PyLong_Check(args[2]) || !PyLong_Check(args[3])) {
        PyErr_SetString(PyExc_TypeError, "ply and to_move must be ints");
        return NULL;
    }
    long long ply = PyLong_AsLongLong(args[2]);
    long to_move = PyLong_AsLong(args[3]);
    if ((ply == -1 || to_move == -1) && PyErr_Occurred())
        return NULL;
    if (ply < 0 || (to_move != 0 && to_move != 1)) {
        PyErr_Format(PyExc_ValueError, "ply must be 0 or more and to_move 0 or 1, not %lld and %ld", ply, to_move);
        return NULL;
    }
    PyObject *last = args[4], *legal = args[5];
    if (last != Py_None && !PyUnicode_Check(last)) {
        PyErr_Format(PyExc_TypeError, "last_move must be a str or None, not %.100s", Py_TYPE(last)->tp_name);
        return NULL;
    }
    PyObject *fast = NULL;
    if (legal != Py_None) {
        fast = PySequence_Fast(legal, "legal_moves must be a tuple or list of str");
        if (fast == NULL)
            return NULL;
        if (PySequence_Fast_GET_SIZE(fast) > 64) {
            Py_DECREF(fast);
            PyErr_SetString(PyExc_ValueError, "an 8x8 board has at most 64 legal moves");
            return NULL;
        }
    }

    Writer out;
    out.size = 0;
    unsigned char head = fast == NULL ? 0x89 : 0x8a;
    put(&out, &head, 1);
    PUT_LITERAL(&out, "\xa4size\x08\xa5" "board\x98");
    put_rows(&out, black, white);
    PUT_LITERAL(&out, "\xa5" "discs\x92");
    put_uint(&out, (uint64_t)__builtin_popcountll(black));
    put_uint(&out, (uint64_t)__builtin_popcountll(white));
    PUT_LITERAL(&out, "\xa9must_pass\xc2\xa9last_move");
    if (last == Py_None) {
        PUT_LITERAL(&out, "\xc0");
    } else if (!put_short_str(&out, last, "last_move")) {
        Py_XDECREF(fast);
        return NULL;
    }
    PUT_LITERAL(&out, "\xa4game\xa7othello\xa3ply");
    put_uint(&out, (uint64_t)ply);
    PUT_LITERAL(&out, "\xa7to_move");
    put_uint(&out, (uint64_t)to_move);
    PUT_LITERAL(&out, "\xa7outcome\xc0");
    if (fast != NULL) {
        Py_ssize_t count = PySequence_Fast_GET_SIZE(fast);
        PUT_LITERAL(&out, "\xab" "legal_moves");
        if (count < 16) {
            unsigned char array = (unsigned char)(0x90 | count);
            put(&out, &array, 1);
        } else {
            unsigned char array[3] = {0xdc, 0, (unsigned char)count};
            put(&out, array, 3);
        }
        PyObject **names = PySequence_Fast_ITEMS(fast);
        for (Py_ssize_t i = 0; i < count; i++) {
            if (!PyUnicode_Check(names[i])) {
                PyErr_Format(PyExc_TypeError, "legal_moves must hold str, not %.100s", Py_TYPE(names[i])->tp_name);
                Py_DECREF(fast);
                return NULL;
            }
            if (!put_short_str(&out, names[i], "a legal move")) {
                Py_DECREF(fast);
                return NULL;
            }
        }
        Py_DECREF(fast);
    }
    return PyBytes_FromStringAndSize((const char *)out.bytes, out.size);
}

static PyMethodDef methods[] = {
    {"view", (PyCFunction)(void (*)(void))view, METH_FASTCALL, view_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "server.tables._othello_views",
    .m_doc = "The MessagePack view of an 8x8 Othello position in a game that goes on, written from its bitboards.",
    .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC PyInit__othello_views(void)
{
    fill_offsets();
    return PyModule_Create(&module);
}
