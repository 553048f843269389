"""The independent check the Python tests apply to every answer: replaying
the blank's moves on the start board."""


def replay(start, rows, cols, moves):
    """Applies blank moves (U, D, L, R) to a row-major tile list (0 = blank)
    and returns the tiles after them; an illegal move raises AssertionError."""
    tiles = list(start)
    blank = tiles.index(0)
    step = {"U": -cols, "D": cols, "L": -1, "R": 1}
    for m in moves:
        to = blank + step[m]
        assert 0 <= to < rows * cols, f"move {m} leaves the board"
        assert not (m in "LR" and to // cols != blank // cols), f"move {m} wraps a row"
        tiles[blank], tiles[to] = tiles[to], tiles[blank]
        blank = to
    return tiles
