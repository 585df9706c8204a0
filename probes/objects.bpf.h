/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * objects.bpf.h - engines wherever they are loaded: an executable mapping
 * (mmap with PROT_EXEC: the dynamic loader, dlopen()) or an exec of a file
 * no traced process has run before stops the process and tells the
 * collector, which looks for RocksDB or SQLite in it, attaches their probes
 * and lets the process go on.  Nothing of the object has run by then: the
 * signal is taken on the way back to user space.
 */
#ifndef __WS_OBJECTS_H
#define __WS_OBJECTS_H

#define WS_PROT_EXEC	0x4
#define WS_SIGSTOP	19	/* x86_64 */

/* an object's identity, from a file of the current task */
static __always_inline bool file_key(struct file *f, struct ws_obj_key *k)
{
	struct inode *ino;

	if (!f)
		return false;
	ino = BPF_CORE_READ(f, f_inode);
	if (!ino)
		return false;
	k->dev = BPF_CORE_READ(ino, i_sb, s_dev);
	k->ino = BPF_CORE_READ(ino, i_ino);
	return true;
}

/* tell the collector of an object (or, WS_OBJ_LOADER, of a loader that
 * mapped some) and stop the process until it continues it; the signal is
 * taken on the way back to user space, before the object's code runs */
static __always_inline void report_object(struct file *f, const struct ws_obj_key *k,
					  __u32 how, __u64 addr, __u64 len)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct ws_object_rec *r;
	const unsigned char *name = NULL;

	r = bpf_ringbuf_reserve(&events, sizeof(*r), 0);
	if (!r) {
		count(CNT_LOST_OBJECT);
		return;
	}
	r->rec_type = WS_REC_OBJECT;
	r->pid = id >> 32;
	r->tid = (__u32)id;
	r->how = how;
	r->ts_ns = bpf_ktime_get_ns();
	r->dev = k->dev;
	r->ino = k->ino;
	r->addr = addr;
	r->len = len;
	r->__pad = 0;
	if (f)
		name = BPF_CORE_READ(f, f_path.dentry, d_name.name);
	if (!name || bpf_probe_read_kernel_str(r->name, sizeof(r->name), name) < 0)
		r->name[0] = 0;
	r->stopped = !bpf_send_signal(WS_SIGSTOP);
	/* the collector is woken at once: the process waits for it */
	bpf_ringbuf_submit(r, BPF_RB_FORCE_WAKEUP);
}

/* report an object not seen before; only a reported object stops anything */
static __always_inline void new_object(struct file *f, __u32 how, __u64 addr,
				       __u64 len)
{
	struct ws_obj_key k = {};
	__u8 one = 1;
	long err;

	if (!file_key(f, &k))
		return;
	err = bpf_map_update_elem(&objects_seen, &k, &one, BPF_NOEXIST);
	if (err == -EEXIST)
		return;		/* inspected, or being inspected */
	if (err)
		count(CNT_OBJECTS_FULL);
	report_object(f, &k, how, addr, len);
}

/* sys_enter of mmap: an executable file mapping is about to be made */
static __always_inline void map_enter(struct pt_regs *regs, __u32 tid)
{
	struct map_args a = {};

	if (!(BPF_CORE_READ(regs, dx) & WS_PROT_EXEC))
		return;
	a.fd = (__s32)BPF_CORE_READ(regs, r8);
	if (a.fd < 0)
		return;
	a.len = BPF_CORE_READ(regs, si);
	bpf_map_update_elem(&map_args, &tid, &a, BPF_ANY);
}

/* sys_exit of mmap: the mapping is made, nothing in it has run */
static __always_inline void map_exit(long ret, __u32 tid)
{
	struct map_args *a = bpf_map_lookup_elem(&map_args, &tid);
	struct map_args args;

	if (!a)
		return;
	args = *a;
	bpf_map_delete_elem(&map_args, &tid);
	if (ret <= 0 && ret > -4096)	/* an error */
		return;
	new_object(fd_file(args.fd), WS_OBJ_MMAP, ret, args.len);
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(ws_exec, struct task_struct *p, pid_t old_pid,
	     struct linux_binprm *bprm)
{
	if (!is_traced(p->tgid))
		return 0;
	new_object(BPF_CORE_READ(bprm, file), WS_OBJ_EXEC, 0, 0);
	return 0;
}

/*
 * The dynamic loader's debugger hook, _dl_debug_state(): glibc's and musl's
 * loaders call it before dlopen() maps objects (r_state RT_ADD) and again
 * once they are mapped, before any of their code has run (RT_CONSISTENT).
 * A uprobe here costs nothing between dlopen() calls, unlike a syscall
 * tracepoint, which every syscall of every task would pay: so it is
 * attached for the whole run, in every mode that follows objects.  The
 * cookie is the distance from the hook to _r_debug.r_state in the same
 * loader; the process stops only at RT_CONSISTENT (or when the state
 * cannot be read), and the collector looks for new objects in its maps.
 */
#define WS_RT_CONSISTENT 0

SEC("uprobe")
int ws_loader(struct pt_regs *ctx)
{
	__s64 off = (__s64)bpf_get_attach_cookie(ctx);
	__u64 ip = PT_REGS_IP(ctx);
	struct ws_obj_key none = {};
	__s32 state = -1;

	if (!follow_objects || !is_traced(bpf_get_current_pid_tgid() >> 32))
		return 0;
	if (off && !bpf_probe_read_user(&state, sizeof(state), (void *)(ip + off)) &&
	    state != WS_RT_CONSISTENT)
		return 0;
	report_object(NULL, &none, WS_OBJ_LOADER, ip, 0);
	return 0;
}

#endif /* __WS_OBJECTS_H */
