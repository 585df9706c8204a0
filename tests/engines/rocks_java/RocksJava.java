// tests/test_bindings.py's JVM workload: synced puts through the RocksDB
// Java binding (rocksdbjni), which extracts its librocksdbjni to a
// temporary file and dlopen()s it (System.load) when the class loads.
// THREADS threads write PUTS synced puts each, then the program prints what
// it did ("puts N") and RocksDB's own statistics in db_bench's format
// ("rocksdb.wal.synced COUNT : N").
//
//   java -cp rocksdbjni.jar:. RocksJava DB PUTS THREADS
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicLong;

import org.rocksdb.Options;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.Statistics;
import org.rocksdb.WriteOptions;

public class RocksJava {
    public static void main(String[] args) throws Exception {
        if (args.length != 3) {
            System.err.println("usage: RocksJava DB PUTS THREADS");
            System.exit(2);
        }
        final int puts = Integer.parseInt(args[1]);
        final int threads = Integer.parseInt(args[2]);
        RocksDB.loadLibrary();
        final AtomicLong done = new AtomicLong();
        try (Statistics stats = new Statistics();
             Options options = new Options().setCreateIfMissing(true).setStatistics(stats);
             RocksDB db = RocksDB.open(options, args[0]);
             WriteOptions sync = new WriteOptions().setSync(true)) {
            Thread[] ts = new Thread[threads];
            for (int t = 0; t < threads; t++) {
                final int id = t;
                ts[t] = new Thread(() -> {
                    try {
                        for (int i = 0; i < puts; i++) {
                            byte[] k = ("key-" + id + "-" + i).getBytes(StandardCharsets.UTF_8);
                            db.put(sync, k, new byte[100]);
                            done.incrementAndGet();
                        }
                    } catch (RocksDBException e) {
                        throw new RuntimeException(e);
                    }
                });
                ts[t].start();
            }
            for (Thread t : ts) {
                t.join();
            }
            System.out.println("puts " + done.get());
            System.out.println(stats.toString());
        }
    }
}
