import java.util.concurrent.*;
public class Sched {
    public static void main(String[] a) throws Exception {
        ScheduledExecutorService s = Executors.newScheduledThreadPool(2);
        CountDownLatch l = new CountDownLatch(3);
        long t0 = System.nanoTime();
        for (long ms : new long[]{500, 1500, 3000})
            s.schedule(() -> { System.out.println("task at " + (System.nanoTime() - t0) / 1000000 + " ms"); l.countDown(); }, ms, TimeUnit.MILLISECONDS);
        boolean ok = l.await(60, TimeUnit.SECONDS);
        System.out.println("main done " + ok + " at " + (System.nanoTime() - t0) / 1000000 + " ms");
        s.shutdown();
    }
}
