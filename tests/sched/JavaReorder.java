// The reorder bug with Java threads: setters store a = 1 then b = -1 (and
// both back to 0); a checker that looks while they run asserts it sees
// (0, 0) or (1, -1). Racing instructions: the setters' two volatile stores and the
// checker's two loads (no call once compiled).
public class JavaReorder {
    static volatile int a, b, finished;
    static volatile boolean bad;

    public static void main(String[] args) throws Exception {
        Thread[] ts = new Thread[4];
        for (int i = 0; i < 3; i++) {
            ts[i] = new Thread(() -> {
                for (int r = 0; r < 30000; r++) {
                    a = 1;
                    b = -1;
                    a = 0;
                    b = 0;
                }
                synchronized (JavaReorder.class) { finished++; }
            });
        }
        ts[3] = new Thread(() -> {
            for (int k = 0; k < 200000 && finished < 3; k++) {
                int x = a, y = b;
                if (!((x == 0 && y == 0) || (x == 1 && y == -1))) bad = true;
            }
        });
        for (Thread t : ts) t.start();
        for (Thread t : ts) t.join();
        System.out.println(bad ? "checker saw a and b disagree" : "checker saw a and b agree");
        System.exit(bad ? 1 : 0);
    }
}
