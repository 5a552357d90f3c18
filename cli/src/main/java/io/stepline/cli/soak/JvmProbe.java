package io.stepline.cli.soak;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import javax.management.MBeanServerConnection;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;

import com.sun.tools.attach.VirtualMachine;

/**
 * Reads another JVM's memory from outside it: the heap through its platform MXBeans (the JDK's
 * attach API starts its local JMX agent; no tool process per sample, which on two cores would cost
 * more than what it measures), and the resident set from {@code /proc/PID/status}.
 */
final class JvmProbe implements AutoCloseable {
    /** One reading: resident set, heap in use now, and heap still in use after the last collection of each pool. */
    record Memory(long rssBytes, long heapUsedBytes, long heapAfterGcBytes) { }

    private final long pid;
    private final JMXConnector connector;
    private final MemoryMXBean memory;
    private final List<MemoryPoolMXBean> heapPools;

    private JvmProbe(long pid, JMXConnector connector, MemoryMXBean memory, List<MemoryPoolMXBean> heapPools) {
        this.pid = pid;
        this.connector = connector;
        this.memory = memory;
        this.heapPools = heapPools;
    }

    static JvmProbe attach(long pid) throws Exception {
        VirtualMachine vm = VirtualMachine.attach(Long.toString(pid));
        String address;
        try {
            address = vm.startLocalManagementAgent();
        } finally {
            vm.detach();
        }
        JMXConnector c = JMXConnectorFactory.connect(new JMXServiceURL(address));
        MBeanServerConnection s = c.getMBeanServerConnection();
        MemoryMXBean mem = ManagementFactory.newPlatformMXBeanProxy(s, ManagementFactory.MEMORY_MXBEAN_NAME, MemoryMXBean.class);
        List<MemoryPoolMXBean> pools = ManagementFactory.getPlatformMXBeans(s, MemoryPoolMXBean.class).stream()
                .filter(p -> p.getType() == MemoryType.HEAP).toList();
        return new JvmProbe(pid, c, mem, pools);
    }

    Memory read() throws IOException {
        long afterGc = 0;
        for (MemoryPoolMXBean p : heapPools) {
            var u = p.getCollectionUsage();
            afterGc += u == null ? 0 : u.getUsed();
        }
        return new Memory(rss(pid), memory.getHeapMemoryUsage().getUsed(), afterGc);
    }

    /** VmRSS of a process, in bytes (-1 where /proc has no such line). */
    static long rss(long pid) throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
            if (line.startsWith("VmRSS:")) {
                return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
            }
        }
        return -1;
    }

    @Override
    public void close() throws IOException {
        connector.close();
    }
}
