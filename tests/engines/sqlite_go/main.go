// tests/test_bindings.py's Go workload: SQLite compiled into the binary
// (github.com/mattn/go-sqlite3 builds the amalgamation through cgo), one
// table created, then TXNS transactions of ROWS inserts each, each
// committed; prints what it committed and what SQLite itself counted: its
// commit hook fires once for every transaction that wrote (the CREATE and
// each COMMIT), and a SELECT counts the rows.
//
//	sqlite_go DB TXNS ROWS
package main

import (
	"database/sql"
	"fmt"
	"os"
	"runtime"
	"strconv"

	sqlite3 "github.com/mattn/go-sqlite3"
)

func main() {
	// walscope follows a SQLite transaction by the thread that runs it;
	// Go moves a goroutine between threads, and a transaction whose
	// COMMIT ran on another thread than its BEGIN would count twice
	// (1 run in 3 unpinned): the goroutine that commits stays on one
	runtime.LockOSThread()
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: sqlite_go DB TXNS ROWS")
		os.Exit(2)
	}
	txns, err1 := strconv.Atoi(os.Args[2])
	rows, err2 := strconv.Atoi(os.Args[3])
	if err1 != nil || err2 != nil || txns < 1 || rows < 1 {
		fmt.Fprintln(os.Stderr, "sqlite_go: TXNS and ROWS are positive integers")
		os.Exit(2)
	}
	hooked := 0
	sql.Register("sqlite3_hooked", &sqlite3.SQLiteDriver{
		ConnectHook: func(c *sqlite3.SQLiteConn) error {
			c.RegisterCommitHook(func() int { hooked++; return 0 })
			return nil
		},
	})
	// one connection: every statement on the same sqlite3*, in order
	db, err := sql.Open("sqlite3_hooked", "file:"+os.Args[1]+"?_journal_mode=DELETE&_sync=FULL")
	check(err)
	db.SetMaxOpenConns(1)
	_, err = db.Exec("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
	check(err)
	committed, inserted := 0, 0
	for i := 0; i < txns; i++ {
		tx, err := db.Begin()
		check(err)
		for j := 0; j < rows; j++ {
			r, err := tx.Exec("INSERT INTO t (v) VALUES (?)", fmt.Sprintf("row %d.%d", i, j))
			check(err)
			n, err := r.RowsAffected()
			check(err)
			inserted += int(n)
		}
		check(tx.Commit())
		committed++
	}
	var count int
	check(db.QueryRow("SELECT count(*) FROM t").Scan(&count))
	v, _, _ := sqlite3.Version()
	fmt.Printf("sqlite %s committed %d inserted %d rows %d commit_hook %d\n",
		v, committed, inserted, count, hooked)
	check(db.Close())
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "sqlite_go:", err)
		os.Exit(1)
	}
}
