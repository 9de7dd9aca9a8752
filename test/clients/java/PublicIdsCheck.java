// The Java public-ID recipe (PublicIds.java, Bouncy Castle's FF1) against the known-answer table
// and the server, run by test/clients/run.sh java (PGHOST, PGPORT from its environment; connects
// as the superuser postgres, which may set snowflake.mask_keys):
// - every row of test/unit/mask_vectors.inc (made by the JavaScript recipe): mask, unmask,
//   maskText and unmaskText, on both widths and the three AES key sizes;
// - against snowflake_mask(), snowflake_unmask(), snowflake_mask_text() and
//   snowflake_unmask_text() under the same key list: edge IDs, issued IDs and some thousands of
//   random ones with low bits set, both ways, byte for byte;
// - a rotation: text IDs made under key A still resolve, on both sides, under 'B:..., A:...',
//   while new ones name B; with A retired, both refuse them;
// - the same bad text IDs and out-of-range IDs refused by both (22P02, 22003 on the server).
// With the argument "kat" it checks the table only, without a server.
// Prints "ok:"/"FAIL:" lines and exits 1 on any failure.
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Array;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

public class PublicIdsCheck {
    static final String KEY_A = "A:2b7e151628aed2a6abf7158809cf4f3c";
    static final String KEY_B = "B:000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";
    static int failures = 0;

    static void check(String what, boolean ok) {
        System.out.println((ok ? "ok: " : "FAIL: ") + what);
        if (!ok) failures++;
    }

    /** Every row of the known-answer table, all four operations; returns the number of rows. */
    static int knownAnswers(Path file) throws Exception {
        Pattern row = Pattern.compile("\\{'(.)', \"([0-9a-f]+)\", (\\d+), UINT64_C\\((\\d+)\\), UINT64_C\\((\\d+)\\), \"(\\w{12})\"\\},");
        int rows = 0, bad = 0;
        for (String line : Files.readAllLines(file)) {
            if (line.startsWith("//")) continue;
            Matcher m = row.matcher(line);
            if (!m.matches()) { System.out.println("  unreadable row: " + line); bad++; continue; }
            PublicIds p = new PublicIds(m.group(1) + ":" + m.group(2), Integer.parseInt(m.group(3)));
            long id = Long.parseLong(m.group(4)), masked = Long.parseLong(m.group(5));
            String text = m.group(6);
            if (p.mask(id) != masked || p.unmask(masked) != id || !p.maskText(id).equals(text) || p.unmaskText(text) != id) {
                System.out.println("  differs: " + line);
                bad++;
            }
            rows++;
        }
        check("known answers: " + rows + " rows of " + file.getFileName() + ", " + bad + " differ", rows >= 60 && bad == 0);
        return rows;
    }

    /** Sets snowflake.mask_keys (resets it when keys is null) and waits until SHOW gives shown (the key material hidden). */
    static void setKeys(Connection c, String keys, String shown) throws Exception {
        try (Statement s = c.createStatement()) {
            s.execute(keys == null ? "ALTER SYSTEM RESET snowflake.mask_keys" : "ALTER SYSTEM SET snowflake.mask_keys = '" + keys + "'");
            s.execute("SELECT pg_reload_conf()");
            for (int i = 0; shown != null && i < 200; i++) {
                try (ResultSet r = s.executeQuery("SHOW snowflake.mask_keys")) {
                    r.next();
                    if (r.getString(1).equals(shown)) return;
                }
                Thread.sleep(50);
            }
            if (shown == null) return;
        }
        throw new IllegalStateException("the server never showed snowflake.mask_keys = '" + shown + "'");
    }

    /** One column of SELECT expr FROM unnest(values) WITH ORDINALITY, in order, as text. */
    static List<String> column(Connection c, String expr, String type, Object[] values) throws SQLException {
        List<String> out = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT (" + expr + ")::text FROM unnest(?::" + type + "[]) WITH ORDINALITY AS u(x, n) ORDER BY n")) {
            ps.setArray(1, c.createArrayOf(type, values));
            try (ResultSet r = ps.executeQuery()) {
                while (r.next()) out.add(r.getString(1));
            }
        }
        return out;
    }

    /** The SQLSTATE of a query that should fail, or "none". */
    static String sqlstate(Connection c, String sql, String arg) {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setString(1, arg);
            ps.executeQuery().close();
            return "none";
        } catch (SQLException e) {
            return e.getSQLState();
        }
    }

    static boolean refuses(Runnable r) {
        try { r.run(); return false; } catch (IllegalArgumentException e) { return true; }
    }

    static long[] ids(Connection c) throws SQLException {
        List<Long> ids = new ArrayList<>(List.of(0L, 1L, 2L, 1L << 31, (1L << 62) - 1, 1L << 62, Long.MAX_VALUE - 1, Long.MAX_VALUE));
        try (Statement s = c.createStatement(); ResultSet r = s.executeQuery("SELECT snowflake_nextval() FROM generate_series(1, 50)")) {
            while (r.next()) ids.add(r.getLong(1));
        }
        Random random = new Random(35);
        for (int i = 0; i < 2000; i++) ids.add(random.nextLong() >>> 1);
        for (int i = 0; i < 1000; i++) ids.add((random.nextLong() >>> 1) | 0xfffL); // a full sequence field
        return ids.stream().mapToLong(Long::longValue).toArray();
    }

    static Object[] boxed(long[] a) { return java.util.Arrays.stream(a).boxed().toArray(); }

    public static void main(String[] args) throws Exception {
        Path kat = Path.of(System.getProperty("snowflake.vectors", "test/unit/mask_vectors.inc"));
        knownAnswers(kat);
        // The usage docs/public-ids.md quotes; checked against the server after the rotation below.
        PublicIds ids = new PublicIds("B:000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f, A:2b7e151628aed2a6abf7158809cf4f3c", 63);
        String publicId = ids.maskText(1234567890123456789L); // 12 characters: the key's ID, 11 base62 digits
        long id = ids.unmaskText(publicId); // under whichever listed key publicId names
        long masked = ids.mask(id); // in [0, 2^63) (63: the width; 53 under js53); ids.unmask(masked) gives id back
        check("the quoted usage round-trips", id == 1234567890123456789L && ids.unmask(masked) == id);
        if (args.length > 0 && args[0].equals("kat")) System.exit(failures == 0 ? 0 : 1);

        String url = "jdbc:postgresql://" + System.getenv("PGHOST") + ":" + System.getenv("PGPORT") + "/postgres";
        try (Connection c = DriverManager.getConnection(url, "postgres", null)) {
            setKeys(c, KEY_A, "A:(hidden)");
            long[] xs = ids(c);
            PublicIds a = new PublicIds(KEY_A, 63);
            List<String> masks = column(c, "snowflake_mask(x)", "bigint", boxed(xs));
            List<String> texts = column(c, "snowflake_mask_text(x)", "bigint", boxed(xs));
            int differ = 0;
            String[] oldTexts = new String[xs.length];
            Object[] clientMasks = new Object[xs.length], clientTexts = new Object[xs.length];
            for (int i = 0; i < xs.length; i++) {
                long m = a.mask(xs[i]);
                oldTexts[i] = a.maskText(xs[i]);
                clientMasks[i] = m;
                clientTexts[i] = oldTexts[i];
                if (!masks.get(i).equals(Long.toString(m)) || !texts.get(i).equals(oldTexts[i])
                        || a.unmask(Long.parseLong(masks.get(i))) != xs[i] || a.unmaskText(texts.get(i)) != xs[i]) differ++;
            }
            check(xs.length + " IDs: Java's mask and maskText equal the server's, and unmask theirs back; " + differ + " differ", differ == 0);

            List<String> back = column(c, "snowflake_unmask(x)", "bigint", clientMasks);
            List<String> backText = column(c, "snowflake_unmask_text(x)", "text", clientTexts);
            differ = 0;
            for (int i = 0; i < xs.length; i++)
                if (!back.get(i).equals(Long.toString(xs[i])) || !backText.get(i).equals(Long.toString(xs[i]))) differ++;
            check("the server unmasks Java's masks and text IDs to the same " + xs.length + " IDs; " + differ + " differ", differ == 0);

            // unmask of values no mask came from: the inverse permutation, byte for byte too.
            List<String> inverse = column(c, "snowflake_unmask(x)", "bigint", boxed(xs));
            differ = 0;
            for (int i = 0; i < xs.length; i++) if (!inverse.get(i).equals(Long.toString(a.unmask(xs[i])))) differ++;
            check("unmask of " + xs.length + " arbitrary values: Java equals the server; " + differ + " differ", differ == 0);

            // Rotation: B masks now, A's text IDs keep resolving while A stays listed.
            setKeys(c, KEY_B + ", " + KEY_A, "B:(hidden), A:(hidden)");
            PublicIds ba = new PublicIds(KEY_B + ", " + KEY_A, 63);
            List<String> newTexts = column(c, "snowflake_mask_text(x)", "bigint", boxed(xs));
            List<String> oldBack = column(c, "snowflake_unmask_text(x)", "text", oldTexts);
            differ = 0;
            for (int i = 0; i < xs.length; i++)
                if (!newTexts.get(i).equals(ba.maskText(xs[i])) || newTexts.get(i).charAt(0) != 'B'
                        || !oldBack.get(i).equals(Long.toString(xs[i])) || ba.unmaskText(oldTexts[i]) != xs[i]) differ++;
            check("the quoted usage gives the server's mask and text ID under the same key list",
                    column(c, "snowflake_mask_text(x)", "bigint", new Object[] {id}).equals(List.of(publicId))
                    && column(c, "snowflake_mask(x)", "bigint", new Object[] {id}).equals(List.of(Long.toString(masked))));
            check("after rotation to 'B:..., A:...': new text IDs name B and equal Java's; the " + xs.length
                    + " made under A still resolve on both sides; " + differ + " differ", differ == 0);

            setKeys(c, KEY_B, "B:(hidden)");
            PublicIds b = new PublicIds(KEY_B, 63);
            check("with A retired, the server refuses A's text IDs (22P02) and so does Java",
                    sqlstate(c, "SELECT snowflake_unmask_text(?)", oldTexts[0]).equals("22P02") && refuses(() -> b.unmaskText(oldTexts[0])));

            String[] bad = {"", "B", "B0000000000", "B00000000000A", "B0000000000-", "B0000000000 ", "Bzzzzzzzzzzz",
                "BAzL8n0Y58m8" /* 2^63 */, "C00000000000" /* no such key */};
            List<String> wrong = new ArrayList<>();
            for (String t : bad)
                if (!sqlstate(c, "SELECT snowflake_unmask_text(?)", t).equals("22P02") || !refuses(() -> b.unmaskText(t))) wrong.add(t);
            check(bad.length + " bad text IDs refused by both, the server with 22P02; accepted somewhere: " + wrong, wrong.isEmpty());
            String top = Long.toString(b.unmaskText("BAzL8n0Y58m7")); // 2^63 - 1, the largest text value
            check("the largest text value, 2^63 - 1, read alike",
                    column(c, "snowflake_unmask_text(x)", "text", new Object[] {"BAzL8n0Y58m7"}).equals(List.of(top)));
            boolean ranged = true;
            for (String f : new String[] {"snowflake_mask", "snowflake_unmask", "snowflake_mask_text"})
                ranged &= sqlstate(c, "SELECT " + f + "(?::bigint)", "-1").equals("22003");
            check("an ID below 0 refused by the server (22003) and by Java", ranged && refuses(() -> b.mask(-1)) && refuses(() -> b.unmask(-1)));
            setKeys(c, null, null);
        }
        System.exit(failures == 0 ? 0 : 1);
    }
}
