// Java clients of snowflake_nextval_block(n), run by test/clients/run.sh java
// (PGHOST, PGPORT, SNOWFLAKE_NODE from its environment), with Debian's
// PostgreSQL JDBC driver and Hibernate 3.6:
// - Hibernate's enhanced SequenceStyleGenerator with a dialect that fetches the
//   "sequence" value from a block: pooled-lo takes lower(block); pooled, which in
//   Hibernate 3.6 hands out [value - increment, value), takes upper(block). The
//   0.2.0 recipe for pooled, upper(block) - 1, is run too, to show its failure.
// - Hibernate sessions (pooled) saving while plain INSERT ... DEFAULT snowflake_nextval()
//   runs on the same table, from several threads.
// - JDBC: a block per executeBatch, and a block per COPY (CopyManager).
// Prints "ok:"/"FAIL:" lines and exits 1 on any failure.
import java.io.StringReader;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.hibernate.Session;
import org.hibernate.SessionFactory;
import org.hibernate.Transaction;
import org.hibernate.cfg.Configuration;
import org.hibernate.dialect.PostgreSQLDialect;
import org.postgresql.PGConnection;

public class HibernateBlocks {
    static final String URL = "jdbc:postgresql://" + System.getenv("PGHOST") + ":" + System.getenv("PGPORT") + "/postgres";
    static final long NODE = Long.parseLong(System.getenv("SNOWFLAKE_NODE"));
    static int failures = 0;

    /** The recipe: a dialect that reads a "sequence" named snowflake_lo_N or snowflake_hi_N from a block of N IDs. */
    public static class SnowflakeDialect extends PostgreSQLDialect {
        @Override
        public String getSequenceNextValString(String sequenceName) {
            String name = sequenceName.substring(sequenceName.lastIndexOf('.') + 1); // hibernate.default_schema qualifies it
            if (name.startsWith("snowflake_lo_")) // pooled-lo: the block's first ID
                return "select lower(snowflake_nextval_block(" + name.substring(13) + "))";
            if (name.startsWith("snowflake_hi_")) // pooled, Hibernate 3.6 and 4.x: the block's exclusive upper end
                return "select upper(snowflake_nextval_block(" + name.substring(13) + "))";
            return super.getSequenceNextValString(sequenceName);
        }
    }

    /** 0.2.0's recipe for pooled, upper(block) - 1, off by one on Hibernate 3.6: only to show it fail. */
    public static class OldRecipeDialect extends SnowflakeDialect {
        @Override
        public String getSequenceNextValString(String sequenceName) {
            String name = sequenceName.substring(sequenceName.lastIndexOf('.') + 1);
            if (name.startsWith("snowflake_oldhi_"))
                return "select upper(snowflake_nextval_block(" + name.substring(16) + ")) - 1";
            return super.getSequenceNextValString(sequenceName);
        }
    }

    /** The entity: a row with a snowflake key assigned by Hibernate from blocks. */
    public static class Item {
        private Long id;
        private String v;
        public Long getId() { return id; }
        public void setId(Long id) { this.id = id; }
        public String getV() { return v; }
        public void setV(String v) { this.v = v; }
    }

    static void check(String what, boolean ok) {
        System.out.println((ok ? "ok: " : "FAIL: ") + what);
        if (!ok) failures++;
    }

    static long nodeOf(long id) { return (id >> 12) & 1023; }

    static SessionFactory factory(String sequence, String optimizer) throws java.io.IOException {
        return factory(sequence, optimizer, "none");
    }

    static SessionFactory factory(String sequence, String optimizer, String hbm2ddl) throws java.io.IOException {
        // item.hbm.xml (its path in the system property snowflake.mapping) maps pooled blocks of 50.
        String mapping = new String(java.nio.file.Files.readAllBytes(java.nio.file.Paths.get(System.getProperty("snowflake.mapping"))))
            .replace(">snowflake_hi_50<", ">" + sequence + "<").replace(">pooled<", ">" + optimizer + "<");
        Class<?> dialect = sequence.startsWith("snowflake_oldhi_") ? OldRecipeDialect.class : SnowflakeDialect.class;
        return new Configuration()
            .setProperty("hibernate.connection.url", URL)
            .setProperty("hibernate.connection.username", "postgres")
            .setProperty("hibernate.dialect", dialect.getName())
            .setProperty("hibernate.default_schema", "public")
            .setProperty("hibernate.connection.pool_size", "8")
            .setProperty("hibernate.bytecode.use_reflection_optimizer", "false")
            .setProperty("hibernate.hbm2ddl.auto", hbm2ddl)
            .addXML(mapping)
            .buildSessionFactory();
    }

    /** Saves n rows through Hibernate, one transaction each; counts the ones the database refused. */
    static int save(SessionFactory sf, int n, String tag) {
        int refused = 0;
        for (int i = 0; i < n; i++) {
            Session s = sf.openSession();
            Transaction tx = s.beginTransaction();
            try {
                Item item = new Item();
                item.setV(tag);
                s.save(item);
                tx.commit();
            } catch (RuntimeException e) {
                tx.rollback();
                if (refused++ == 0 && !tag.equals("oldhi")) { // the first refusal of a run that should have none
                    for (Throwable t = e; t != null; t = t.getCause()) {
                        System.out.println("  refused: " + t);
                        java.util.regex.Matcher m = java.util.regex.Pattern.compile("'(\\d+)'::int8").matcher(String.valueOf(t.getMessage()));
                        if (m.find()) {
                            try (Connection d = DriverManager.getConnection(URL, "postgres", "");
                                 Statement q = d.createStatement()) {
                                ResultSet r = q.executeQuery("SELECT v FROM java_items WHERE id = " + m.group(1));
                                System.out.println("  held by: " + (r.next() ? r.getString(1) : "nobody now"));
                            } catch (Exception x) { System.out.println("  lookup failed: " + x); }
                        }
                    }
                }
            } finally {
                s.close();
            }
        }
        return refused;
    }

    /** Checks the rows tagged tag: all distinct and on this node; returns how many there are. */
    static long[] audit(Connection c, String tag) throws Exception {
        try (PreparedStatement st = c.prepareStatement(
                "SELECT count(*), count(DISTINCT id), count(*) FILTER (WHERE (snowflake_parse(id)).node <> ?) FROM java_items WHERE v LIKE ?")) {
            st.setLong(1, NODE);
            st.setString(2, tag);
            ResultSet r = st.executeQuery();
            r.next();
            return new long[] {r.getLong(1), r.getLong(2), r.getLong(3)};
        }
    }

    public static void main(String[] args) throws Exception {
        Connection c = DriverManager.getConnection(URL, "postgres", "");
        try (Statement st = c.createStatement()) {
            st.execute("DROP SEQUENCE IF EXISTS snowflake_lo_50; DROP TABLE IF EXISTS java_items; CREATE TABLE java_items (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), v text)");
        }

        // 0.2.0's pooled recipe: every block but the first starts one below its range, on the last ID of the
        // block before (a duplicate key) or on the previous tick's last sequence of the node below (another node).
        SessionFactory old = factory("snowflake_oldhi_50", "pooled");
        int refused = save(old, 500, "oldhi");
        old.close();
        long[] a = audit(c, "oldhi");
        System.out.println("0.2.0 pooled recipe: " + a[0] + " rows saved, " + refused + " refused, " + a[2] + " on another node");
        check("the 0.2.0 pooled recipe fails on Hibernate 3.6 (duplicate keys or IDs of another node)", refused > 0 || a[2] > 0);

        for (String[] form : new String[][] {{"snowflake_hi_50", "pooled"}, {"snowflake_lo_50", "pooled-lo"}}) {
            SessionFactory sf = factory(form[0], form[1]);
            int bad = save(sf, 500, form[1]);
            sf.close();
            long[] r = audit(c, form[1]);
            check(form[1] + " (" + form[0] + "): 500 rows, none refused, all distinct and on node " + NODE,
                  bad == 0 && r[0] == 500 && r[1] == 500 && r[2] == 0);
        }

        // hbm2ddl validate looks for a sequence of that name: it fails until an unused placeholder exists.
        boolean refusedWithout;
        try {
            factory("snowflake_lo_50", "pooled-lo", "validate").close();
            refusedWithout = false;
        } catch (RuntimeException e) {
            refusedWithout = true;
        }
        try (Statement st = c.createStatement()) {
            st.execute("CREATE SEQUENCE snowflake_lo_50"); // a placeholder: never called, the dialect reads blocks
        }
        SessionFactory validated = factory("snowflake_lo_50", "pooled-lo", "validate");
        int validatedRefused = save(validated, 50, "validated");
        validated.close();
        long[] v = audit(c, "validated");
        check("hbm2ddl validate: refused without the placeholder sequence, passes with it, IDs still from blocks",
              refusedWithout && validatedRefused == 0 && v[0] == 50 && v[2] == 0);

        // Hibernate (pooled) and plain inserts at once, on the same table. Not pooled-lo: in Hibernate 3.6.10
        // its generate() is not synchronized, and threads sharing a session factory got the same ID.
        SessionFactory sf = factory("snowflake_hi_50", "pooled");
        AtomicInteger refusedTogether = new AtomicInteger();
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 4; t++)
            threads.add(new Thread(() -> refusedTogether.addAndGet(save(sf, 250, "mixed-hibernate"))));
        for (int t = 0; t < 2; t++)
            threads.add(new Thread(() -> {
                try (Connection pc = DriverManager.getConnection(URL, "postgres", "");
                     PreparedStatement ins = pc.prepareStatement("INSERT INTO java_items (v) VALUES ('mixed-default')")) {
                    for (int i = 0; i < 500; i++) ins.executeUpdate();
                } catch (Exception e) {
                    refusedTogether.incrementAndGet();
                }
            }));
        for (Thread t : threads) t.start();
        for (Thread t : threads) t.join();
        sf.close();
        long[] m = audit(c, "mixed-%");
        check("4 Hibernate threads and 2 plain inserters: " + m[0] + " rows, 0 duplicate keys, 0 IDs of another node",
              refusedTogether.get() == 0 && m[0] == 2000 && m[1] == 2000 && m[2] == 0);

        // JDBC: one block per batch, its IDs sent with the rows.
        try (Statement st = c.createStatement();
             PreparedStatement ins = c.prepareStatement("INSERT INTO java_items (id, v) VALUES (?, 'batch')")) {
            ResultSet r = st.executeQuery("SELECT lower(b), upper(b) FROM snowflake_nextval_block(100) AS b");
            r.next();
            for (long id = r.getLong(1); id < r.getLong(2); id++) {
                ins.setLong(1, id);
                ins.addBatch();
            }
            ins.executeBatch();
        }
        long[] b = audit(c, "batch");
        check("executeBatch with a block of 100: 100 distinct rows on node " + NODE, b[0] == 100 && b[1] == 100 && b[2] == 0);

        // COPY: one block per load, the loader numbering its rows.
        StringBuilder rows = new StringBuilder();
        try (Statement st = c.createStatement()) {
            ResultSet r = st.executeQuery("SELECT lower(b), upper(b) FROM snowflake_nextval_block(4096) AS b");
            r.next();
            for (long id = r.getLong(1); id < r.getLong(2); id++) rows.append(id).append("\tcopy\n");
        }
        long copied = c.unwrap(PGConnection.class).getCopyAPI().copyIn("COPY java_items (id, v) FROM STDIN", new StringReader(rows.toString()));
        long[] cp = audit(c, "copy");
        check("COPY with a block of 4096: " + copied + " rows, all distinct, on node " + NODE, cp[0] == 4096 && cp[1] == 4096 && cp[2] == 0);

        c.close();
        System.exit(failures == 0 ? 0 : 1);
    }
}
