// Check-then-act with Java threads: an unsynchronized lazy singleton; two
// threads may both see it missing and both construct it.
// Racing instructions: the null test and the store (no call between them
// once the constructor is inlined).
public class JavaLazyInit {
    static volatile Object instance;
    static volatile int built;

    static Object get() {
        if (instance == null) {
            int[] table = new int[4096];
            for (int i = 0; i < table.length; i++) table[i] = i * 3;
            built++;
            instance = table;
        }
        return instance;
    }

    public static void main(String[] a) throws Exception {
        Thread[] ts = new Thread[2];
        for (int i = 0; i < 2; i++) {
            ts[i] = new Thread(JavaLazyInit::get);
            ts[i].start();
        }
        for (Thread t : ts) t.join();
        System.out.println("built " + built);
        System.exit(built != 1 ? 1 : 0);
    }
}
