// The JVM seeds these from System.nanoTime() and currentTimeMillis(): under one
// seed they repeat, whatever the JIT and the safepoints do meanwhile.
public class R { public static void main(String[] a) { System.out.println(new java.util.Random().nextLong() + " " + Math.random() + " " + java.util.concurrent.ThreadLocalRandom.current().nextInt() + " " + System.nanoTime()); } }
