"""Runs in the solution's process: one database file shared by several processes.

The API's worker processes each hold their own connection to the same database file; a
cursor one process returned may come back to another. `fetch_here` pages through this
process's connection, `fetch_in_new_process` starts a fresh Python process that imports
the solution, opens its own connection and fetches one page. `change` is another request
inserting and deleting rows through a third connection. The test keeps its own copy of
the rows and checks every page; no expected value lives here.
"""

import json
import os
import sqlite3
import subprocess
import sys
import tempfile

import paging

SCHEMA = "CREATE TABLE products (id INTEGER PRIMARY KEY, name TEXT NOT NULL, price INTEGER NOT NULL)"
CHILD_TIMEOUT_S = 60  # a generous bound for one page in a fresh interpreter; it normally takes tens of ms

_CHILD = r"""
import json, sqlite3, sys
solution_dir, path, limit, cursor = json.loads(sys.stdin.read())
sys.path.insert(0, solution_dir)
from paging import fetch_page
conn = sqlite3.connect(path)
page, cursor = fetch_page(conn, limit, cursor)
conn.close()
sys.stdout.write(json.dumps([page, cursor]))
"""

_state = {}


def create(rows, statements=()):
    folder = tempfile.mkdtemp(prefix="paging-")
    path = os.path.join(folder, "shop.db")
    conn = sqlite3.connect(path)
    conn.execute(SCHEMA)
    for statement in statements:
        conn.execute(statement)
    conn.executemany("INSERT INTO products (id, name, price) VALUES (?, ?, ?)", [tuple(r) for r in rows])
    conn.commit()
    conn.close()
    _state["path"] = path
    _state["here"] = sqlite3.connect(path)
    _state["writer"] = sqlite3.connect(path)
    return path


def change(inserts, deletes):
    writer = _state["writer"]
    writer.executemany("INSERT INTO products (id, name, price) VALUES (?, ?, ?)", [tuple(r) for r in inserts])
    writer.executemany("DELETE FROM products WHERE id = ?", [(i,) for i in deletes])
    writer.commit()


def fetch_here(limit, cursor):
    page, cursor = paging.fetch_page(_state["here"], limit, cursor)
    return [page, cursor]


def fetch_in_new_process(limit, cursor):
    solution_dir = os.path.dirname(os.path.abspath(paging.__file__))
    done = subprocess.run([sys.executable, "-c", _CHILD], input=json.dumps([solution_dir, _state["path"], limit, cursor]),
                          capture_output=True, text=True, timeout=CHILD_TIMEOUT_S, cwd=solution_dir)
    if done.returncode != 0:
        return {"failed": done.stderr[-2000:]}
    return json.loads(done.stdout)
