// Lost update with Java threads: count++ on a shared field, unsynchronized.
// Racing instructions: the getfield and the putfield (no call).
public class JavaCounter {
    static volatile int count;

    public static void main(String[] a) throws Exception {
        Thread[] ts = new Thread[2];
        for (int i = 0; i < 2; i++) {
            ts[i] = new Thread(() -> {
                for (int k = 0; k < 1000000; k++) count++;
            });
            ts[i].start();
        }
        for (Thread t : ts) t.join();
        System.out.println("count " + count + " expected 2000000");
        System.exit(count != 2000000 ? 1 : 0);
    }
}
