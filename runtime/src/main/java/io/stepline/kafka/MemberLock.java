package io.stepline.kafka;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * An exclusive lock on a static member's name on this host, held while the stage runs: a second
 * process of the same application under the same name would fence the first out of the group (its
 * stream threads die with FencedInstanceIdException), so it is refused at start instead, with what
 * to change. The operating system drops the lock when the process dies, kill -9 included, so a
 * restart never waits for it.
 */
final class MemberLock implements AutoCloseable {
    private final FileChannel channel;
    private final FileLock lock;

    private MemberLock(FileChannel channel, FileLock lock) {
        this.channel = channel;
        this.lock = lock;
    }

    static MemberLock acquire(Path stateDir, String applicationId, String memberName) {
        Path file = stateDir.resolve(applicationId + "." + memberName + ".member.lock");
        FileChannel ch = null;
        try {
            Files.createDirectories(stateDir);
            ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
            FileLock l = ch.tryLock();
            if (l != null) {
                return new MemberLock(ch, l);
            }
        } catch (OverlappingFileLockException e) {
            // held by this very JVM: refused like another process
        } catch (IOException e) {
            closeQuietly(ch);
            throw new IllegalStateException("cannot lock " + file + ": " + e.getMessage(), e);
        }
        closeQuietly(ch);
        throw new IllegalStateException("another " + applicationId + " process on this host runs as member '" + memberName + "' (lock " + file
                + "); give each process its own --state-dir or --member-name");
    }

    private static void closeQuietly(FileChannel ch) {
        if (ch != null) {
            try {
                ch.close();
            } catch (IOException ignored) {
                // nothing held
            }
        }
    }

    @Override
    public void close() {
        try {
            lock.release();
        } catch (IOException ignored) {
            // the channel's close below releases it too
        }
        closeQuietly(channel);
    }
}
