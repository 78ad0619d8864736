"""What every layer uses while a process runs: the error classes that become one line, atomic
writes, damaged-cache reads, stage announcements and progress bars, the exit status, memory
trimming, the silenced library messages, librosa under a lock, and where released weights come
from."""
