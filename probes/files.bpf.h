/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * files.bpf.h - syscalls by class, files by kind: what a traced syscall
 * does (write, sync, other), which file an fd is (file_kind.h rules), the
 * syscall a task is in from its saved registers, and openat/unlink records.
 */
#ifndef __WS_FILES_H
#define __WS_FILES_H

static __always_inline int io_class(long nr)
{
	switch (nr) {
	case WS_NR_write:
	case WS_NR_pwrite64:
	case WS_NR_writev:
	case WS_NR_pwritev:
	case WS_NR_pwritev2:
		return IOC_WRITE;
	case WS_NR_fsync:
	case WS_NR_fdatasync:
	case WS_NR_sync_file_range:
		return IOC_SYNC;
	case WS_NR_close:
	case WS_NR_openat:
	case WS_NR_unlink:
	case WS_NR_unlinkat:
	case WS_NR_ftruncate:
	case WS_NR_fallocate:
	case WS_NR_fcntl:
	case WS_NR_flock:
	case WS_NR_nanosleep:
	case WS_NR_clock_nanosleep:
		return IOC_OTHER;
	}
	return IOC_NONE;
}

static __always_inline bool has_fd(long nr)
{
	return nr != WS_NR_openat && nr != WS_NR_unlink && nr != WS_NR_unlinkat &&
	       nr != WS_NR_nanosleep && nr != WS_NR_clock_nanosleep;
}

/* futex commands that wait (FUTEX_CMD_MASK drops the private and clock
 * flags): WAIT, LOCK_PI, WAIT_BITSET, WAIT_REQUEUE_PI, LOCK_PI2 */
#define FUTEX_CMD_MASK		0x7f
#define FUTEX_WAIT_CMDS		(1u << 0 | 1u << 6 | 1u << 9 | 1u << 11 | 1u << 13)

/* is an untraced syscall a wait for another thread: a futex wait or a
 * yield (a futex wake is not) */
static __always_inline bool is_wait(long nr, struct pt_regs *regs)
{
	__u32 cmd;

	if (nr == WS_NR_sched_yield)
		return true;
	if (nr != WS_NR_futex)
		return false;
	cmd = (__u32)BPF_CORE_READ(regs, si) & FUTEX_CMD_MASK;
	return cmd < 32 && (FUTEX_WAIT_CMDS >> cmd & 1);
}

static __always_inline bool is_log_kind(__u16 kind)
{
	return kind == FK_JOURNAL || kind == FK_WAL;
}

/*
 * A row's write or sync (class cls), on its engine's log (log) or on any
 * other file: the component each engine names for the four.  The log's
 * I/O keeps it busy for the rows queued behind it (t->sys_busy: 2 a
 * write, 1 a sync), and a row that syncs the log does so for its group
 * (its leader).  0xff: neither a write nor a sync.
 */
static __always_inline __u8 log_or_data_io(struct thread_state *t, int cls,
					   bool log, __u8 log_write, __u8 log_sync,
					   __u8 data_write, __u8 data_sync)
{
	if (cls == IOC_WRITE) {
		if (!log)
			return data_write;
		t->sys_busy = 2;
		return log_write;
	}
	if (cls == IOC_SYNC) {
		if (!log)
			return data_sync;
		t->sys_busy = 1;
		t->rec.flags |= WS_WF_LEADER;
		return log_sync;
	}
	return 0xff;
}

/* an open file of a task, NULL if none */
static __always_inline struct file *task_fd_file(struct task_struct *task,
						 int fd)
{
	struct file **fdarr;
	struct file *f = NULL;
	unsigned int max;

	fdarr = BPF_CORE_READ(task, files, fdt, fd);
	max = BPF_CORE_READ(task, files, fdt, max_fds);
	if (fd < 0 || (unsigned int)fd >= max)
		return NULL;
	if (bpf_probe_read_kernel(&f, sizeof(f), &fdarr[fd]))
		return NULL;
	return f;
}

static __always_inline struct file *fd_file(int fd)
{
	return task_fd_file(bpf_get_current_task_btf(), fd);
}

static __always_inline bool inode_is_dir(struct inode *ino)
{
	umode_t mode = BPF_CORE_READ(ino, i_mode);

	return (mode & 00170000) == 0040000;
}

/* O_DSYNC (asm-generic/fcntl.h); O_SYNC holds it too */
#define WS_O_DSYNC 010000

/* writes to an fd of the current task are durable when they return: it
 * was opened O_DSYNC or O_SYNC (a log an engine syncs by its writes) */
static __always_inline bool fd_is_dsync(int fd)
{
	struct file *f = fd_file(fd);

	return f && (BPF_CORE_READ(f, f_flags) & WS_O_DSYNC);
}

/* inode and directory bit of an fd of the current task */
static __always_inline __u64 fd_inode(int fd, bool *is_dir)
{
	struct file *f = fd_file(fd);
	struct inode *ino;

	*is_dir = false;
	if (!f)
		return 0;
	ino = BPF_CORE_READ(f, f_inode);
	if (!ino)
		return 0;
	*is_dir = inode_is_dir(ino);
	return BPF_CORE_READ(ino, i_ino);
}

/* enum ws_file_kind of an fd of a task, from its file's name and its
 * directory's ("pg_wal/000000010000000000000001": a rule may name the
 * directory), each cut at half of WS_PATH_LEN */
static __always_inline __u16 fd_kind(struct task_struct *task, int fd)
{
	struct file *f = task_fd_file(task, fd);
	const unsigned char *name, *parent;
	struct inode *ino;
	__u32 zero = 0, off = 0;
	long n = 0;
	char *buf;

	buf = bpf_map_lookup_elem(&name_buf, &zero);
	if (!f || !buf)
		return FK_OTHER;
	ino = BPF_CORE_READ(f, f_inode);
	name = BPF_CORE_READ(f, f_path.dentry, d_name.name);
	parent = BPF_CORE_READ(f, f_path.dentry, d_parent, d_name.name);
	if (!ino || !name)
		return FK_OTHER;
	if (parent)
		n = bpf_probe_read_kernel_str(buf, WS_PATH_LEN / 2 - 1, parent);
	if (n > 1) {		/* "dir/": off <= WS_PATH_LEN / 2 - 1 */
		off = (__u32)(n - 1) & (WS_PATH_LEN / 2 - 1);
		buf[off & (WS_PATH_LEN - 1)] = '/';
		off = (off + 1) & (WS_PATH_LEN / 2 - 1);
	}
	if (bpf_probe_read_kernel_str(buf + off, WS_PATH_LEN / 2, name) < 0)
		return FK_OTHER;
	return ws_file_kind(buf, inode_is_dir(ino));
}

/*
 * The syscall a task is in (the current one: its files are read unlocked),
 * from the user registers saved at kernel entry: a syscall entry stores its number in orig_ax and -ENOSYS in
 * ax until it returns.  Interrupts and faults store a vector or an error
 * code in orig_ax but leave the user's ax, so they pass only when user code
 * happened to hold -ENOSYS there.  -1 when not in a syscall.
 */
static __always_inline __s32 saved_syscall(struct task_struct *task,
					   __u16 *kind)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);
	long nr, ax;

	*kind = FK_OTHER;
	if (!regs)
		return -1;
	nr = BPF_CORE_READ(regs, orig_ax);
	ax = BPF_CORE_READ(regs, ax);
	if (nr < 0 || nr > 1023 || ax != -ENOSYS)
		return -1;
	if (io_class(nr) != IOC_NONE && has_fd(nr))
		*kind = fd_kind(task, (int)BPF_CORE_READ(regs, di));
	return nr;
}

/* returns the file kind of the path (FK_OTHER if it could not be read) */
static __always_inline __u16 emit_open(struct thread_state *t, __u32 tgid,
				       __u32 tid, __u64 now, long ret)
{
	struct ws_open_rec *r;
	struct fd_info fi = {};
	bool is_dir = false;
	__u64 key;

	r = bpf_ringbuf_reserve(&events, sizeof(*r), 0);
	if (!r) {
		count(CNT_LOST_OPEN);
		/* the fd still needs its kind; without the path it is "other" */
		return FK_OTHER;
	}
	r->rec_type = WS_REC_OPEN;
	r->pid = tgid;
	r->tid = tid;
	r->nr = t->sys_nr;
	r->ts_ns = t->sys_start;
	r->ret = ret;
	r->ino = 0;
	r->__pad0 = 0;
	r->__pad1 = 0;
	if (bpf_probe_read_user_str(r->path, sizeof(r->path),
				    (void *)t->sys_arg) < 0)
		r->path[0] = 0;
	if (t->sys_nr == WS_NR_openat && ret >= 0) {
		r->ino = fd_inode((int)ret, &is_dir);
		fi.ino = r->ino;
		fi.kind = ws_file_kind(r->path, is_dir);
		key = (__u64)tgid << 32 | (__u32)ret;
		if (bpf_map_update_elem(&fds, &key, &fi, BPF_ANY))
			count(CNT_FDS_FULL);
		t->sys_fd = (__s32)ret;
		t->sys_kind = fi.kind;
		t->sys_ino = fi.ino;
	} else {
		fi.kind = ws_file_kind(r->path, false);
	}
	r->kind = fi.kind;
	bpf_ringbuf_submit(r, rb_flags());
	return fi.kind;
}

#endif /* __WS_FILES_H */
