// Public IDs in the app (issue 35): the same keyed, reversible mask as the SQL functions
// snowflake_mask(), snowflake_unmask(), snowflake_mask_text() and snowflake_unmask_text(), with
// the same key list as the setting snowflake.mask_keys, on Bouncy Castle's FF1 (NIST SP 800-38G;
// Debian's libbcprov-java). The construction: FF1 over AES, radix 2, empty tweak, on the ID's w
// bits (63; 53 under the js53 layout), most significant bit first; the text form is the key's
// one-character ID, then the masked value as 11 base62 digits (0-9A-Za-z).
// Tested byte for byte against the server by PublicIdsCheck.java (test/clients/run.sh java).
import java.util.LinkedHashMap;
import java.util.Map;
import org.bouncycastle.crypto.fpe.FPEFF1Engine;
import org.bouncycastle.crypto.params.FPEParameters;
import org.bouncycastle.crypto.params.KeyParameter;

public final class PublicIds {
    private static final String DIGITS = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    private final Map<Character, byte[]> keys = new LinkedHashMap<>(); // the first key masks
    private final char firstId;
    private final int width;

    /** keyList as snowflake.mask_keys is written: "B:<hex>, A:<hex>"; width 63, or 53 under js53. */
    public PublicIds(String keyList, int width) {
        if (width != 63 && width != 53) throw new IllegalArgumentException("width must be 63 or 53");
        for (String entry : keyList.split(",")) {
            entry = entry.trim();
            if (!entry.matches("[0-9A-Za-z]:([0-9A-Fa-f]{32}|[0-9A-Fa-f]{48}|[0-9A-Fa-f]{64})") || keys.containsKey(entry.charAt(0)))
                throw new IllegalArgumentException("malformed or repeated key entry in the key list");
            byte[] key = new byte[(entry.length() - 2) / 2];
            for (int i = 0; i < key.length; i++) key[i] = (byte) Integer.parseInt(entry.substring(2 + 2 * i, 4 + 2 * i), 16);
            keys.put(entry.charAt(0), key);
        }
        this.firstId = keys.keySet().iterator().next();
        this.width = width;
    }

    /** FF1 in radix 2 over x's w bits, most significant first: one byte per binary digit. */
    private long ff1(byte[] key, boolean encrypt, long x) {
        if (x < 0 || x >>> width != 0) throw new IllegalArgumentException("ID out of range: " + x);
        byte[] in = new byte[width], out = new byte[width];
        for (int i = 0; i < width; i++) in[i] = (byte) ((x >>> (width - 1 - i)) & 1);
        FPEFF1Engine ff1 = new FPEFF1Engine();
        ff1.init(encrypt, new FPEParameters(new KeyParameter(key), 2, new byte[0]));
        ff1.processBlock(in, 0, width, out, 0);
        long y = 0;
        for (byte bit : out) y = (y << 1) | bit;
        return y;
    }

    public long mask(long id) { return ff1(keys.get(firstId), true, id); }

    public long unmask(long masked) { return ff1(keys.get(firstId), false, masked); }

    public String maskText(long id) {
        char[] text = new char[12];
        text[0] = firstId;
        long m = mask(id);
        for (int i = 11; i >= 1; i--, m /= 62) text[i] = DIGITS.charAt((int) (m % 62));
        return new String(text);
    }

    public long unmaskText(String text) {
        if (text.length() != 12) throw new IllegalArgumentException("invalid public ID: \"" + text + "\"");
        byte[] key = keys.get(text.charAt(0));
        if (key == null) throw new IllegalArgumentException("public ID \"" + text + "\" names a key the key list does not hold");
        long m = 0;
        for (int i = 1; i < 12; i++) {
            int d = DIGITS.indexOf(text.charAt(i));
            if (d < 0 || m > (Long.MAX_VALUE - d) / 62) // a bad digit, or past 2^63 - 1
                throw new IllegalArgumentException("invalid public ID: \"" + text + "\"");
            m = m * 62 + d;
        }
        if (m >>> width != 0) throw new IllegalArgumentException("invalid public ID: \"" + text + "\"");
        return ff1(key, false, m);
    }
}
