"""The nine TPC-C tables and their initial population."""
from __future__ import annotations

import random
import sqlite3
from dataclasses import dataclass

DDL = """
CREATE TABLE warehouse (w_id INTEGER PRIMARY KEY, w_name TEXT, w_street_1 TEXT,
  w_street_2 TEXT, w_city TEXT, w_state TEXT, w_zip TEXT, w_tax REAL, w_ytd REAL);
CREATE TABLE district (d_id INTEGER, d_w_id INTEGER, d_name TEXT, d_street_1 TEXT,
  d_street_2 TEXT, d_city TEXT, d_state TEXT, d_zip TEXT, d_tax REAL, d_ytd REAL,
  d_next_o_id INTEGER, PRIMARY KEY (d_w_id, d_id));
CREATE TABLE customer (c_id INTEGER, c_d_id INTEGER, c_w_id INTEGER, c_first TEXT,
  c_middle TEXT, c_last TEXT, c_street_1 TEXT, c_street_2 TEXT, c_city TEXT,
  c_state TEXT, c_zip TEXT, c_phone TEXT, c_since TEXT, c_credit TEXT,
  c_credit_lim REAL, c_discount REAL, c_balance REAL, c_ytd_payment REAL,
  c_payment_cnt INTEGER, c_delivery_cnt INTEGER, c_data TEXT,
  PRIMARY KEY (c_w_id, c_d_id, c_id));
CREATE INDEX customer_by_name ON customer (c_w_id, c_d_id, c_last, c_first);
CREATE TABLE history (h_c_id INTEGER, h_c_d_id INTEGER, h_c_w_id INTEGER,
  h_d_id INTEGER, h_w_id INTEGER, h_date TEXT, h_amount REAL, h_data TEXT);
CREATE TABLE orders (o_id INTEGER, o_d_id INTEGER, o_w_id INTEGER, o_c_id INTEGER,
  o_entry_d TEXT, o_carrier_id INTEGER, o_ol_cnt INTEGER, o_all_local INTEGER,
  PRIMARY KEY (o_w_id, o_d_id, o_id));
CREATE INDEX orders_by_customer ON orders (o_w_id, o_d_id, o_c_id, o_id);
CREATE TABLE new_order (no_o_id INTEGER, no_d_id INTEGER, no_w_id INTEGER,
  PRIMARY KEY (no_w_id, no_d_id, no_o_id));
CREATE TABLE order_line (ol_o_id INTEGER, ol_d_id INTEGER, ol_w_id INTEGER,
  ol_number INTEGER, ol_i_id INTEGER, ol_supply_w_id INTEGER, ol_delivery_d TEXT,
  ol_quantity INTEGER, ol_amount REAL, ol_dist_info TEXT,
  PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number));
CREATE TABLE item (i_id INTEGER PRIMARY KEY, i_im_id INTEGER, i_name TEXT,
  i_price REAL, i_data TEXT);
CREATE TABLE stock (s_i_id INTEGER, s_w_id INTEGER, s_quantity INTEGER,
  s_dist_01 TEXT, s_dist_02 TEXT, s_dist_03 TEXT, s_dist_04 TEXT, s_dist_05 TEXT,
  s_dist_06 TEXT, s_dist_07 TEXT, s_dist_08 TEXT, s_dist_09 TEXT, s_dist_10 TEXT,
  s_ytd INTEGER, s_order_cnt INTEGER, s_remote_cnt INTEGER, s_data TEXT,
  PRIMARY KEY (s_w_id, s_i_id));
"""
TABLES = ("warehouse", "district", "customer", "history", "orders", "new_order",
          "order_line", "item", "stock")
SYLLABLES = ("BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY",
             "ATION", "EING")
DISTRICTS = 10


@dataclass(frozen=True)
class Scale:
    """Cardinalities: the specification's, times scale (at least 1 each)."""
    warehouses: int = 1
    scale: float = 1.0

    def n(self, full: int) -> int:
        return max(1, int(round(full * self.scale)))

    @property
    def items(self) -> int:
        return self.n(100_000)

    @property
    def customers(self) -> int:      # per district
        return self.n(3000)

    @property
    def orders(self) -> int:         # initial orders per district
        return self.customers

    @property
    def new_orders(self) -> int:     # the last 900 of 3000 are undelivered
        return max(1, int(self.orders * 900 / 3000))


def last_name(num: int) -> str:
    return "".join(SYLLABLES[int(d)] for d in f"{num:03d}")


def _astr(rng: random.Random, lo: int, hi: int) -> str:
    return "".join(rng.choice("abcdefghijklmnopqrstuvwxyz")
                   for _ in range(rng.randint(lo, hi)))


def _data(rng: random.Random, lo: int, hi: int) -> str:
    s = _astr(rng, lo, hi)
    if rng.random() < 0.1:  # 10% carry ORIGINAL
        i = rng.randint(0, len(s) - 8)
        s = s[:i] + "ORIGINAL" + s[i + 8:]
    return s


def load(con: sqlite3.Connection, sc: Scale, seed: int = 1) -> None:
    """Create and populate every table in one transaction."""
    rng = random.Random(seed)
    con.executescript(DDL)
    con.execute("BEGIN")
    con.executemany("INSERT INTO item VALUES (?,?,?,?,?)", (
        (i, rng.randint(1, 10_000), _astr(rng, 14, 24),
         round(rng.uniform(1, 100), 2), _data(rng, 26, 50))
        for i in range(1, sc.items + 1)))
    for w in range(1, sc.warehouses + 1):
        con.execute("INSERT INTO warehouse VALUES (?,?,?,?,?,?,?,?,?)",
                    (w, _astr(rng, 6, 10), "s1", "s2", "city", "ST", "123411111",
                     round(rng.uniform(0, 0.2), 4), 300000.0))
        con.executemany(
            "INSERT INTO stock VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            ((i, w, rng.randint(10, 100), *[_astr(rng, 24, 24) for _ in range(10)],
              0, 0, 0, _data(rng, 26, 50)) for i in range(1, sc.items + 1)))
        for d in range(1, DISTRICTS + 1):
            con.execute("INSERT INTO district VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                        (d, w, _astr(rng, 6, 10), "s1", "s2", "city", "ST",
                         "123411111", round(rng.uniform(0, 0.2), 4), 30000.0,
                         sc.orders + 1))
            cust = []
            for c in range(1, sc.customers + 1):
                num = c - 1 if c <= 1000 else rng.randint(0, 999)
                cust.append((c, d, w, _astr(rng, 8, 16), "OE", last_name(num % 1000),
                             "s1", "s2", "city", "ST", "123411111", "0123456789",
                             "2026-01-01", "BC" if rng.random() < 0.1 else "GC",
                             50000.0, round(rng.uniform(0, 0.5), 4), -10.0, 10.0,
                             1, 0, _astr(rng, 300, 500)))
            con.executemany("INSERT INTO customer VALUES (?,?,?,?,?,?,?,?,?,?,?,?,"
                            "?,?,?,?,?,?,?,?,?)", cust)
            con.executemany("INSERT INTO history VALUES (?,?,?,?,?,?,?,?)",
                            ((c, d, w, d, w, "2026-01-01", 10.0, _astr(rng, 12, 24))
                             for c in range(1, sc.customers + 1)))
            perm = list(range(1, sc.customers + 1))
            rng.shuffle(perm)
            first_new = sc.orders - sc.new_orders + 1
            for o in range(1, sc.orders + 1):
                cnt = rng.randint(5, 15)
                delivered = o < first_new
                con.execute("INSERT INTO orders VALUES (?,?,?,?,?,?,?,?)",
                            (o, d, w, perm[(o - 1) % len(perm)], "2026-01-01",
                             rng.randint(1, 10) if delivered else None, cnt, 1))
                con.executemany("INSERT INTO order_line VALUES (?,?,?,?,?,?,?,?,?,?)",
                                ((o, d, w, n, rng.randint(1, sc.items), w,
                                  "2026-01-01" if delivered else None, 5,
                                  0.0 if delivered else round(rng.uniform(0.01, 9999.99), 2),
                                  _astr(rng, 24, 24)) for n in range(1, cnt + 1)))
                if not delivered:
                    con.execute("INSERT INTO new_order VALUES (?,?,?)", (o, d, w))
    con.execute("COMMIT")


def counts(con: sqlite3.Connection) -> dict[str, int]:
    return {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES}
