"""The stored reports of a collector's SQLite database, read by tests.

Since schema version 8 the keyed reports live in a file of their own beside the database
(server/storage/sqlite/sqlite_keyed_file.h): `connect` attaches it and creates the TEMP view
stored_reports (tests/lib/stored_reports.sql), which holds every stored report once.
"""

import os
import sqlite3

_VIEW_SQL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "stored_reports.sql")


def connect(db_path):
    """A sqlite3 connection to db_path with the keyed file attached and stored_reports defined."""
    con = sqlite3.connect(db_path)
    con.execute("ATTACH DATABASE ? AS keyed", (os.path.realpath(db_path) + "-reports",))
    with open(_VIEW_SQL, encoding="utf-8") as f:
        con.executescript(f.read())
    return con
