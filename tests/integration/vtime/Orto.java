import java.util.concurrent.*;
public class Orto {
    public static void main(String[] a) throws Exception {
        CompletableFuture<String> f = CompletableFuture.supplyAsync(() -> {
            try { Thread.sleep(5000); } catch (InterruptedException e) {}
            return "late"; }).orTimeout(1, TimeUnit.SECONDS);
        try { System.out.println(f.get()); }
        catch (ExecutionException e) { System.out.println(e.getCause().getClass().getName()); }
    }
}
