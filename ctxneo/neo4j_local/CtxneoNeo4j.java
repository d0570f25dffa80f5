import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;

import org.neo4j.configuration.GraphDatabaseInternalSettings;
import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.connectors.HttpConnector;
import org.neo4j.configuration.connectors.HttpsConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import org.neo4j.graphdb.GraphDatabaseService;

/**
 * A real Neo4j 5.26 Community DBMS, embedded, serving Bolt on 127.0.0.1 only.
 *
 * Usage: java -cp 'lib/*:classes' CtxneoNeo4j HOME_DIR PORT [PAGE_CACHE_MB]
 *
 * Prints "READY bolt://127.0.0.1:PORT" once the default database is available,
 * and shuts the DBMS down cleanly on SIGTERM. Authentication is off: it listens
 * on loopback only and is meant for development and tests.
 */
public final class CtxneoNeo4j {
    public static void main(String[] args) throws Exception {
        if (args.length < 2) {
            System.err.println("usage: CtxneoNeo4j HOME_DIR PORT [PAGE_CACHE_MB]");
            System.exit(2);
        }
        Path home = Path.of(args[0]).toAbsolutePath();
        int port = Integer.parseInt(args[1]);
        long pageCacheMb = args.length > 2 ? Long.parseLong(args[2]) : 256;

        DatabaseManagementService dbms = new DatabaseManagementServiceBuilder(home)
                .setConfig(BoltConnector.enabled, true)
                .setConfig(BoltConnector.listen_address, new SocketAddress("127.0.0.1", port))
                // else the routing table of neo4j:// URIs advertises localhost:7687
                .setConfig(BoltConnector.advertised_address, new SocketAddress("127.0.0.1", port))
                .setConfig(BoltConnector.encryption_level, BoltConnector.EncryptionLevel.DISABLED)
                .setConfig(HttpConnector.enabled, false)
                .setConfig(HttpsConnector.enabled, false)
                .setConfig(GraphDatabaseSettings.auth_enabled, false)
                .setConfig(GraphDatabaseSettings.pagecache_memory, pageCacheMb * 1024 * 1024)
                .setConfig(GraphDatabaseSettings.keep_logical_logs, "1 files")
                .setConfig(GraphDatabaseSettings.preallocate_logical_logs, false)
                .setConfig(GraphDatabaseSettings.udc_enabled, false)
                // Bolt's event loops otherwise wait a 5 s quiet period on shutdown
                .setConfig(GraphDatabaseInternalSettings.netty_server_shutdown_quiet_period, 0)
                .build();

        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                dbms.shutdown();
            } finally {
                System.out.println("STOPPED");
                System.out.flush();
                stopped.countDown();
            }
        }, "ctxneo-neo4j-shutdown"));

        GraphDatabaseService db = dbms.database(GraphDatabaseSettings.DEFAULT_DATABASE_NAME);
        if (!db.isAvailable(Duration.ofMinutes(3).toMillis())) {
            System.err.println("FAILED: the default database did not become available");
            System.exit(1);
        }
        System.out.println("READY bolt://127.0.0.1:" + port);
        System.out.flush();
        stopped.await();
    }
}
