#!/usr/bin/env python3
"""Writes Data.fs files of the shapes ZODB's undo leaves, to time how relstore opens them.

  benchmarks/undo_files.py alternating N out.fs   # A creates the even oids, B the odd,
                                                  # C changes all 2N, D undoes C: D's back
                                                  # pointers go to A and B in turn
  benchmarks/undo_files.py chain N out.fs         # one object; each of N transactions
                                                  # undoes to the one before (a chain)

Then: time build/tools/relstore info file://$PWD/out.fs  (docs/benchmarks.md).
"""
import struct
import sys

TXN = ">QQcHHH"    # tid, tlen, status, ulen, dlen, elen (23 bytes)
DATA = ">QQQQHQ"   # oid, tid, prev, tloc, vlen, plen (42 bytes)
PICKLE = b"\x80\x03cexample\nThing\nq\x00.\x80\x03}q\x01."
FIRST_TID = 0x03F58E0000000000


class DataFs:
    def __init__(self):
        self.out = bytearray(b"FS30")
        self.last = {}  # oid -> offset of its newest record (the next one's prev)

    def add(self, tid, records):
        """records: (oid, bytes) for data, (oid, int) for a back pointer. Returns the
        offset of each oid's record."""
        tpos = len(self.out)
        body = bytearray()
        where = {}
        for oid, value in records:
            pos = tpos + 23 + len(body)
            back = isinstance(value, int)
            plen = 0 if back else len(value)
            body += struct.pack(DATA, oid, tid, self.last.get(oid, 0), tpos, 0, plen)
            body += struct.pack(">Q", value) if back else value
            where[oid] = pos
        tlen = 23 + len(body)
        self.out += struct.pack(TXN, tid, tlen, b" ", 0, 0, 0) + body + struct.pack(">Q", tlen)
        self.last.update(where)
        return where


def alternating(n, f):
    a = f.add(FIRST_TID + 1, [(2 * i, PICKLE + b"a") for i in range(n)])
    b = f.add(FIRST_TID + 2, [(2 * i + 1, PICKLE + b"b") for i in range(n)])
    f.add(FIRST_TID + 3, [(oid, PICKLE + b"c") for oid in range(2 * n)])
    before = {**a, **b}
    f.add(FIRST_TID + 4, [(oid, before[oid]) for oid in range(2 * n)])


def chain(n, f):
    last = f.add(FIRST_TID, [(1, PICKLE)])[1]
    for i in range(1, n):
        last = f.add(FIRST_TID + i, [(1, last)])[1]


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in ("alternating", "chain"):
        sys.exit(__doc__)
    f = DataFs()
    {"alternating": alternating, "chain": chain}[sys.argv[1]](int(sys.argv[2]), f)
    with open(sys.argv[3], "wb") as out:
        out.write(f.out)
    print(f"{sys.argv[3]}: {len(f.out)} bytes")


if __name__ == "__main__":
    main()
