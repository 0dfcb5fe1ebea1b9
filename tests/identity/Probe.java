// SPDX-License-Identifier: MIT
// What a Java program learns about the machine (tests/identity/probe.c's
// lines where Java has the path). args[0], if given, is a directory to list.
import java.io.File;
import java.net.InetAddress;
import java.nio.file.*;
import java.time.*;
import java.util.*;

public class Probe {
    static String first(String p) {
        try { return Files.readAllLines(Paths.get(p)).get(0); } catch (Exception e) { return "-"; }
    }

    public static void main(String[] args) throws Exception {
        System.out.println("cpus.affinity " + Runtime.getRuntime().availableProcessors());
        System.out.println("cpus.online " + first("/sys/devices/system/cpu/online"));
        String host;
        try {
            host = InetAddress.getLocalHost().getHostName();
        } catch (java.net.UnknownHostException e) { // "NAME: NAME: Name or service not known"
            host = e.getMessage().split(":")[0];
        }
        System.out.println("host.uname " + host + " - " + System.getProperty("os.version"));
        System.out.println("tz " + ZoneId.systemDefault() + " "
                + ZonedDateTime.ofInstant(Instant.ofEpochSecond(1700000000L), ZoneId.systemDefault()).getOffset());
        System.out.println("locale " + Locale.getDefault() + " " + System.getProperty("file.encoding"));
        System.out.println("memory.meminfo " + first("/proc/meminfo"));
        if (args.length > 0) {
            List<String> names = new ArrayList<>();
            try (DirectoryStream<Path> ds = Files.newDirectoryStream(Paths.get(args[0]))) {
                for (Path p : ds) if (!p.getFileName().toString().startsWith(".")) names.add(p.getFileName().toString());
            }
            System.out.println("dir " + String.join(" ", names));
        }
    }
}
