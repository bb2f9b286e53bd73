// Runs kafka.tools.DumpLogSegments (kafka-dump-log.sh of the Kafka 4.0 or 4.1 distribution that starts it) many
// times in one JVM, for the differential harness (tests/differential): JVM start-up (~1.5 s) would otherwise
// dominate every case.
//
// Started through the distribution's own kafka-run-class.sh (same JVM options as kafka-dump-log.sh), with this
// class on CLASSPATH.  Protocol on stdin/stdout, one request at a time:
//   request:  one line, the arguments separated by TAB (an empty line is a run without arguments)
//   response: "<exit status> <stdout length> <stderr length>\n" then the raw stdout and stderr bytes.
// Exit.exit(n) is turned into an exception (status n); an uncaught exception is printed as the JVM prints it
// ("Exception in thread "main" " + stack trace) with status 1, as the script would end.
// Everything is reached by reflection, so it compiles with a bare javac (no Kafka jars needed).

import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;

public final class KafkaDumpServer {
    static final class Switch extends OutputStream {
        ByteArrayOutputStream target = new ByteArrayOutputStream();

        @Override public void write(int b) { target.write(b); }
        @Override public void write(byte[] b, int off, int len) { target.write(b, off, len); }
    }

    static final class ExitCalled extends RuntimeException {
        final int status;

        ExitCalled(int status) {
            super("exit " + status, null, false, false);
            this.status = status;
        }
    }

    public static void main(String[] ignored) throws Exception {
        OutputStream reply = new FileOutputStream(FileDescriptor.out);
        Switch out = new Switch();
        Switch err = new Switch();
        String encoding = System.getProperty("stdout.encoding", System.getProperty("sun.stdout.encoding", "UTF-8"));
        PrintStream outStream = new PrintStream(out, true, encoding);
        PrintStream errStream = new PrintStream(err, true, encoding);
        System.setOut(outStream);  // before Scala's Console captures System.out
        System.setErr(errStream);

        Class<?> exit = Class.forName("org.apache.kafka.common.utils.Exit");
        Class<?> procedure = Class.forName("org.apache.kafka.common.utils.Exit$Procedure");
        Object thrower = Proxy.newProxyInstance(procedure.getClassLoader(), new Class<?>[] {procedure},
            (proxy, method, args) -> {
                if (method.getName().equals("execute")) throw new ExitCalled((Integer) args[0]);
                return null;
            });
        exit.getMethod("setExitProcedure", procedure).invoke(null, thrower);
        exit.getMethod("setHaltProcedure", procedure).invoke(null, thrower);
        Method dump = Class.forName("kafka.tools.DumpLogSegments").getMethod("main", String[].class);

        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String[] args = line.isEmpty() ? new String[0] : line.split("\t", -1);
            out.target = new ByteArrayOutputStream();
            err.target = new ByteArrayOutputStream();
            int status = 0;
            try {
                dump.invoke(null, (Object) args);
            } catch (InvocationTargetException e) {
                Throwable cause = e.getCause();
                if (cause instanceof ExitCalled) {
                    status = ((ExitCalled) cause).status;
                } else {
                    errStream.print("Exception in thread \"main\" ");
                    cause.printStackTrace(errStream);
                    status = 1;
                }
            }
            outStream.flush();
            errStream.flush();
            byte[] o = out.target.toByteArray();
            byte[] e = err.target.toByteArray();
            reply.write((status + " " + o.length + " " + e.length + "\n").getBytes(StandardCharsets.US_ASCII));
            reply.write(o);
            reply.write(e);
            reply.flush();
        }
    }
}
