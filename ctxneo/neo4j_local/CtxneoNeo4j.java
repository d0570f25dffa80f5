import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

import inet.ipaddr.IPAddressString;
import org.neo4j.configuration.Config;
import org.neo4j.configuration.GraphDatabaseInternalSettings;
import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.connectors.HttpConnector;
import org.neo4j.configuration.connectors.HttpsConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import org.neo4j.graphdb.GraphDatabaseService;
import org.neo4j.io.fs.DefaultFileSystemAbstraction;
import org.neo4j.kernel.impl.security.User;
import org.neo4j.logging.NullLogProvider;
import org.neo4j.memory.EmptyMemoryTracker;
import org.neo4j.server.security.SecureHasher;
import org.neo4j.server.security.SystemGraphCredential;
import org.neo4j.server.security.auth.CommunitySecurityModule;
import org.neo4j.server.security.auth.FileUserRepository;

/**
 * A real Neo4j 5.26 Community DBMS, embedded, serving Bolt on 127.0.0.1 only.
 *
 * Usage: java -cp 'lib/*:classes' CtxneoNeo4j HOME_DIR PORT PAGE_CACHE_MB PASSWORD_FILE [reset]
 *
 * Authentication is on: user "neo4j" has the password held in PASSWORD_FILE
 * (read from a file so it never shows in the process list). On the first
 * start it is written as the initial user before the system database exists,
 * so there is no moment with a default password. "reset" sets it on an
 * existing DBMS (one made without it) through the embedded API, with Bolt not
 * yet listening. Cypher cannot read files (no LOAD CSV from file URLs) nor
 * reach the network (every address is blocked for LOAD CSV).
 *
 * Prints "READY bolt://127.0.0.1:PORT" once the default database is available,
 * and shuts the DBMS down cleanly on SIGTERM.
 */
public final class CtxneoNeo4j {
    public static void main(String[] args) throws Exception {
        if (args.length < 4) {
            System.err.println("usage: CtxneoNeo4j HOME_DIR PORT PAGE_CACHE_MB PASSWORD_FILE [reset]");
            System.exit(2);
        }
        Path home = Path.of(args[0]).toAbsolutePath();
        int port = Integer.parseInt(args[1]);
        long pageCacheMb = Long.parseLong(args[2]);
        String password = Files.readString(Path.of(args[3]), StandardCharsets.UTF_8).strip();
        boolean reset = args.length > 4 && args[4].equals("reset");

        Path systemDatabase = home.resolve("data").resolve("databases").resolve("system");
        if (!Files.exists(systemDatabase)) {
            writeInitialUser(home, password);
        } else if (reset) {
            resetPassword(home, pageCacheMb, password);
        }

        DatabaseManagementService dbms = builder(home, pageCacheMb)
                .setConfig(BoltConnector.enabled, true)
                .setConfig(BoltConnector.listen_address, new SocketAddress("127.0.0.1", port))
                // else the routing table of neo4j:// URIs advertises localhost:7687
                .setConfig(BoltConnector.advertised_address, new SocketAddress("127.0.0.1", port))
                .setConfig(BoltConnector.encryption_level, BoltConnector.EncryptionLevel.DISABLED)
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
        // Read once, when the system database was made: no copy of the hash need stay behind.
        Files.deleteIfExists(home.resolve("data").resolve("dbms").resolve("auth.ini"));
        System.out.println("READY bolt://127.0.0.1:" + port);
        System.out.flush();
        stopped.await();
    }

    /** The settings every start shares: no HTTP, authentication on, no file or network access. */
    private static DatabaseManagementServiceBuilder builder(Path home, long pageCacheMb) {
        return new DatabaseManagementServiceBuilder(home)
                .setConfig(HttpConnector.enabled, false)
                .setConfig(HttpsConnector.enabled, false)
                .setConfig(GraphDatabaseSettings.auth_enabled, true)
                // No lockout after failed logins: another local user could otherwise lock
                // the owner out by trying wrong passwords. The password is 256 random bits,
                // so guessing gains nothing from the attempts this allows.
                .setConfig(GraphDatabaseSettings.auth_max_failed_attempts, 0)
                // LOAD CSV FROM 'file:///...' would read any file this user can read.
                .setConfig(GraphDatabaseSettings.allow_file_urls, false)
                // ... and FROM 'http://...' would make requests from this machine.
                .setConfig(GraphDatabaseInternalSettings.cypher_ip_blocklist,
                        List.of(new IPAddressString("0.0.0.0/0"), new IPAddressString("::/0")))
                .setConfig(GraphDatabaseSettings.pagecache_memory, pageCacheMb * 1024 * 1024)
                .setConfig(GraphDatabaseSettings.keep_logical_logs, "1 files")
                .setConfig(GraphDatabaseSettings.preallocate_logical_logs, false)
                .setConfig(GraphDatabaseSettings.udc_enabled, false)
                // Bolt's event loops otherwise wait a 5 s quiet period on shutdown
                .setConfig(GraphDatabaseInternalSettings.netty_server_shutdown_quiet_period, 0);
    }

    /** What `neo4j-admin dbms set-initial-password` does: the user the system database starts with. */
    private static void writeInitialUser(Path home, String password) throws Exception {
        Config config = Config.newBuilder().set(GraphDatabaseSettings.neo4j_home, home).build();
        Path file = CommunitySecurityModule.getInitialUserRepositoryFile(config);
        Files.createDirectories(file.getParent());
        Files.deleteIfExists(file);
        FileUserRepository users = new FileUserRepository(
                new DefaultFileSystemAbstraction(), file, NullLogProvider.getInstance(),
                EmptyMemoryTracker.INSTANCE);
        users.start();
        SystemGraphCredential credential = SystemGraphCredential.createCredentialForPassword(
                password.getBytes(StandardCharsets.UTF_8), new SecureHasher());
        users.create(new User("neo4j", null, credential, false, false));
        users.shutdown();
    }

    /** Set the password of an existing DBMS, with no connector open while it happens. */
    private static void resetPassword(Path home, long pageCacheMb, String password) {
        DatabaseManagementService dbms = builder(home, pageCacheMb)
                .setConfig(BoltConnector.enabled, false)
                .build();
        try {
            dbms.database(GraphDatabaseSettings.SYSTEM_DATABASE_NAME).executeTransactionally(
                    "ALTER USER neo4j SET PASSWORD $password CHANGE NOT REQUIRED",
                    Map.of("password", password));
        } finally {
            dbms.shutdown();
        }
    }
}
