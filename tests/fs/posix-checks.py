#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# POSIX permission and ownership checks, run as root, each step as a given
# uid (fork + setgroups/setresgid/setresuid). Usage: posix-checks.py DIR
# [HOSTDIR]: privileged setup (set-id bits) is done in HOSTDIR, the same
# directory seen from the host (the view strips set-id bits by design).
# Prints one "step: result" line per check; results are errno names or the
# attributes that matter, never absolute paths, inode numbers or times, so
# the output for a tmpfs directory and for the same directory through
# fsgate can be compared line by line.
import errno
import os
import stat
import sys
import time

ALICE, BOB, CAROL = 1001, 1002, 1003
SHARED = 1500
GROUPS = {0: [0], ALICE: [ALICE, SHARED], BOB: [BOB], CAROL: [CAROL, SHARED]}

base = sys.argv[1]
host = sys.argv[2] if len(sys.argv) > 2 else base
out = []


def P(rel):
    return os.path.join(base, rel)


def H(rel):
    return os.path.join(host, rel)


def as_user(uid, fn):
    """Run fn() as uid; return its result (a string) or the errno name."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            if uid != 0:
                os.setgroups(GROUPS[uid])
                os.setresgid(uid, uid, uid)
                os.setresuid(uid, uid, uid)
            os.umask(0o022)
            res = fn()
            res = 'ok' if res is None else str(res)
        except OSError as e:
            res = errno.errorcode.get(e.errno, str(e.errno))
        os.write(w, res.encode())
        os._exit(0)
    os.close(w)
    data = b''
    while True:
        chunk = os.read(r, 4096)
        if not chunk:
            break
        data += chunk
    os.close(r)
    os.waitpid(pid, 0)
    return data.decode()


def check(name, uid, fn):
    out.append('%s [uid %d]: %s' % (name, uid, as_user(uid, fn)))


def attrs(rel):
    st = os.lstat(P(rel))
    return 'uid=%d gid=%d mode=%04o type=%s nlink=%d' % (
        st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode),
        stat.filemode(st.st_mode)[0], st.st_nlink)


def write(rel, data=b'data', flags=os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode=0o644):
    def fn():
        fd = os.open(P(rel), flags, mode)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)
    return fn


def read(rel):
    def fn():
        with open(P(rel), 'rb') as f:
            return f.read().decode()
    return fn


# --- setup (root) ---
os.chmod(base, 0o777)
os.mkdir(P('sticky'), 0o777)
os.chmod(P('sticky'), 0o1777)
os.mkdir(P('sgid'), 0o775)
os.chown(P('sgid'), 0, SHARED)
os.chmod(P('sgid'), 0o2775)

# --- read/write per mode ---
check('alice creates a', ALICE, write('a'))
out.append('a: ' + attrs('a'))
check('bob reads a (0644)', BOB, read('a'))
check('bob writes a (0644)', BOB, write('a', flags=os.O_WRONLY))
check('bob appends a (0644)', BOB, write('a', flags=os.O_WRONLY | os.O_APPEND))
check('alice chmod a 0600', ALICE, lambda: os.chmod(P('a'), 0o600))
check('bob reads a (0600)', BOB, read('a'))
check('alice chmod a 0640 chgrp shared', ALICE, lambda: (os.chown(P('a'), -1, SHARED), os.chmod(P('a'), 0o640)) and None)
check('carol (shared) reads a (0640)', CAROL, read('a'))
check('carol (shared) writes a (0640)', CAROL, write('a', flags=os.O_WRONLY))
check('bob reads a (0640)', BOB, read('a'))
check('alice chmod a 0666', ALICE, lambda: os.chmod(P('a'), 0o666))
check('bob writes a (0666)', BOB, write('a', b'bob', flags=os.O_WRONLY | os.O_TRUNC))
check('alice reads a', ALICE, read('a'))
check('bob chmod a (not owner)', BOB, lambda: os.chmod(P('a'), 0o777))
check('bob chown a to bob', BOB, lambda: os.chown(P('a'), BOB, -1))
check('alice chown a to bob', ALICE, lambda: os.chown(P('a'), BOB, -1))
check('alice chgrp a to bob group (not member)', ALICE, lambda: os.chown(P('a'), -1, BOB))
check('bob utime a to a fixed time (not owner)', BOB, lambda: os.utime(P('a'), (1, 1)))
check('bob utime a to now (writable)', BOB, lambda: os.utime(P('a')))
out.append('a: ' + attrs('a'))

# --- truncate permission ---
check('alice creates t', ALICE, write('t', b'0123456789'))
check('bob truncates t (0644)', BOB, lambda: os.truncate(P('t'), 0))
check('alice truncates t', ALICE, lambda: (os.truncate(P('t'), 3), os.stat(P('t')).st_size)[1])

# --- directory permissions ---
check('alice mkdir d 0755', ALICE, lambda: os.mkdir(P('d'), 0o755))
check('bob creates d/x', BOB, write('d/x'))
check('bob lists d', BOB, lambda: ','.join(sorted(os.listdir(P('d')))))
check('alice chmod d 0700', ALICE, lambda: os.chmod(P('d'), 0o700))
check('bob lists d (0700)', BOB, lambda: ','.join(sorted(os.listdir(P('d')))))
check('alice creates d/y', ALICE, write('d/y'))
check('bob stats d/y (0700 dir)', BOB, lambda: os.stat(P('d/y')).st_size)
check('alice chmod d 0711', ALICE, lambda: os.chmod(P('d'), 0o711))
check('bob stats d/y (0711 dir)', BOB, lambda: os.stat(P('d/y')).st_size)
check('bob lists d (0711)', BOB, lambda: ','.join(sorted(os.listdir(P('d')))))
check('bob unlinks d/y (0711 dir)', BOB, lambda: os.unlink(P('d/y')))

# --- a directory of alice's whose group is not hers (in an unprivileged
# sandbox the group is unmapped) ---
os.mkdir(P('gd'), 0o755)
os.chown(P('gd'), ALICE, 0)
out.append('gd: ' + attrs('gd'))
check('alice creates gd/f (her dir, group root)', ALICE, write('gd/f'))
check('alice mkdir gd/sub', ALICE, lambda: os.mkdir(P('gd/sub'), 0o755))
check('alice renames gd/f to gd/g', ALICE, lambda: os.rename(P('gd/f'), P('gd/g')))
check('alice unlinks gd/g', ALICE, lambda: os.unlink(P('gd/g')))
check('bob creates gd/b', BOB, write('gd/b'))

# --- write-only files: the writeback cache would read the pages of a file
# opened write-only, the host refuses reads of a mode 0200 file ---
check('alice creates wo (0200)', ALICE, write('wo', b'12345', mode=0o200))
out.append('wo: ' + attrs('wo'))
check('alice writes wo (0200, existing)', ALICE, write('wo', b'ab', flags=os.O_WRONLY))
check('alice appends to wo (0200)', ALICE, write('wo', b'cd', flags=os.O_WRONLY | os.O_APPEND))
check('alice reads wo (0200)', ALICE, read('wo'))
check('root reads wo', 0, read('wo'))
check('alice truncates wo (0200)', ALICE, lambda: (os.truncate(P('wo'), 3), os.stat(P('wo')).st_size)[1])

# --- execute permission ---
with open('/bin/true', 'rb') as src, open(P('exe'), 'wb') as dst:
    dst.write(src.read())
os.chown(P('exe'), ALICE, ALICE)


def run(rel):
    def fn():
        pid = os.fork()
        if pid == 0:
            try:
                os.execv(P(rel), [rel])
            except OSError as e:
                os._exit(100 + e.errno)
        return 'exit=%d' % os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    return fn


for m in (0o711, 0o744, 0o700):
    os.chmod(P('exe'), m)
    check('alice runs exe (%04o)' % m, ALICE, run('exe'))
    check('bob runs exe (%04o)' % m, BOB, run('exe'))

# --- access(2): what each uid may do with a file and directories ---
for who, uid in (('root', 0), ('alice', ALICE), ('bob', BOB), ('carol', CAROL)):
    for rel in ('a', 'd', 'sticky', 'wo', 'exe', 'gd'):
        check('%s access %s' % (who, rel), uid, lambda: ''.join(
            c if os.access(P(rel), m) else '-'
            for c, m in (('f', os.F_OK), ('r', os.R_OK), ('w', os.W_OK), ('x', os.X_OK))))

# --- sticky directory ---
check('alice creates sticky/f', ALICE, write('sticky/f'))
check('bob unlinks sticky/f', BOB, lambda: os.unlink(P('sticky/f')))
check('bob renames sticky/f', BOB, lambda: os.rename(P('sticky/f'), P('sticky/g')))
check('bob creates sticky/b', BOB, write('sticky/b'))
check('bob renames sticky/b over sticky/f', BOB, lambda: os.rename(P('sticky/b'), P('sticky/f')))
check('alice renames sticky/f over sticky/b', ALICE, lambda: os.rename(P('sticky/f'), P('sticky/b')))
check('root unlinks sticky/b', 0, lambda: os.unlink(P('sticky/b')))
check('alice unlinks sticky/f', ALICE, lambda: os.unlink(P('sticky/f')))

# --- ownership of new objects ---
for who, uid in (('root', 0), ('alice', ALICE), ('bob', BOB)):
    check(who + ' creates file', uid, write(who + '.f'))
    check(who + ' mkdir', uid, lambda: os.mkdir(P(who + '.d'), 0o755))
    check(who + ' symlink', uid, lambda: os.symlink('target', P(who + '.l')))
    check(who + ' mkfifo', uid, lambda: os.mkfifo(P(who + '.p'), 0o644))
    for suffix in ('f', 'd', 'l', 'p'):
        rel = who + '.' + suffix
        st = os.lstat(P(rel))
        mode = '' if suffix == 'l' else ' mode=%04o' % stat.S_IMODE(st.st_mode)
        out.append('%s: uid=%d gid=%d%s' % (rel, st.st_uid, st.st_gid, mode))

# --- setgid directory inheritance ---
check('alice creates sgid/f', ALICE, write('sgid/f'))
check('alice mkdir sgid/d', ALICE, lambda: os.mkdir(P('sgid/d'), 0o755))
check('bob creates sgid/b (not member, dir 2775)', BOB, write('sgid/b'))
out.append('sgid/f: ' + attrs('sgid/f'))
out.append('sgid/d: ' + attrs('sgid/d'))

# --- suid/sgid cleared on write and chown (bits set on the host by root,
# then wait out the view's 1 s attribute timeout) ---
for n in range(1, 10):
    check('alice creates s%d' % n, ALICE, write('s%d' % n, b'#!/bin/true\n'))
    os.chown(H('s%d' % n), ALICE, SHARED)
    os.chmod(H('s%d' % n), 0o6775)
# write-only for others: the view opens it write-only, without the page
# cache (direct I/O), where the kernel does not clear the bits itself
os.chmod(H('s6'), 0o6772)
# set-gid without group execute (no set-uid): what a writer outside the
# group leaves is the host kernel's rule (newer kernels clear it)
os.chmod(H('s9'), 0o2666)
time.sleep(1.2)
out.append('s1 before write: ' + attrs('s1'))
check('bob writes s1 (6775, other)', BOB, write('s1', flags=os.O_WRONLY))
check('carol (shared) writes s1', CAROL, write('s1', b'x', flags=os.O_WRONLY | os.O_APPEND))
out.append('s1 after write by a group member: ' + attrs('s1'))
check('alice writes s2 (owner)', ALICE, write('s2', b'y', flags=os.O_WRONLY | os.O_APPEND))
out.append('s2 after write by owner: ' + attrs('s2'))
check('alice truncates s3', ALICE, lambda: os.truncate(P('s3'), 1))
out.append('s3 after truncate: ' + attrs('s3'))
check('alice chgrp s4 to her group', ALICE, lambda: os.chown(P('s4'), -1, ALICE))
out.append('s4 after chown: ' + attrs('s4'))
check('root writes s5', 0, write('s5', b'z', flags=os.O_WRONLY | os.O_APPEND))
out.append('s5 after write by root: ' + attrs('s5'))
check('bob writes s6 (6772, write-only for him)', BOB, write('s6', b'w', flags=os.O_WRONLY | os.O_APPEND))
out.append('s6 after write by another: ' + attrs('s6'))
# chown(f, -1, -1) changes no id but clears the bits (owner), or is refused
# (another user): under FUSE_HANDLE_KILLPRIV the kernel sends no field
check('alice chown s7 -1 -1 (owner)', ALICE, lambda: os.chown(P('s7'), -1, -1))
out.append('s7 after chown -1 -1: ' + attrs('s7'))
check('bob chown s8 -1 -1 (not owner)', BOB, lambda: os.chown(P('s8'), -1, -1))
out.append('s8 after chown -1 -1 by another: ' + attrs('s8'))
check('bob writes s9 (2666, not in the group)', BOB, write('s9', b'g', flags=os.O_WRONLY | os.O_APPEND))
out.append('s9 after write by another: ' + attrs('s9'))
check('alice chmod 4755 her own file', ALICE, lambda: os.chmod(P('alice.f'), 0o4755))
# fsgate never lets a set-id bit be made through the view (it would be live
# on the host): a deliberate difference, checked by the caller.
out.append('DIVERGE alice.f after chmod 4755: ' + attrs('alice.f'))

# --- link counts, protected_hardlinks ---
check('alice creates h', ALICE, write('h'))
check('alice links h h2', ALICE, lambda: os.link(P('h'), P('h2')))
out.append('h: ' + attrs('h'))
out.append('h2: ' + attrs('h2'))
check('alice unlinks h2', ALICE, lambda: os.unlink(P('h2')))
out.append('h: ' + attrs('h'))
check('alice chmod h 0600', ALICE, lambda: os.chmod(P('h'), 0o600))
check('bob links h (0600, not owner)', BOB, lambda: os.link(P('h'), P('bh')))
check('alice chmod h 0666', ALICE, lambda: os.chmod(P('h'), 0o666))
check('bob links h (0666, not owner)', BOB, lambda: os.link(P('h'), P('bh')))
out.append('h: ' + attrs('h'))
check('alice mkdir hd', ALICE, lambda: os.mkdir(P('hd')))
check('alice links a directory', ALICE, lambda: os.link(P('hd'), P('hd2')))

# --- rename over an existing file ---
check('alice creates x', ALICE, write('x', b'xx'))
check('alice creates y', ALICE, write('y', b'y'))
ino_x = os.stat(P('x')).st_ino
check('alice renames x over y', ALICE, lambda: os.rename(P('x'), P('y')))
check('alice reads y', ALICE, read('y'))
check('alice stats x', ALICE, lambda: os.stat(P('x')))
out.append('y is the old x: %s' % (os.stat(P('y')).st_ino == ino_x))
check('bob renames y over a (dir 0777, not sticky)', BOB, lambda: os.rename(P('y'), P('bob.f')))
check('alice renames dir over non-empty dir', ALICE, lambda: os.rename(P('hd'), P('d')))

# --- timestamps ---
check('alice creates ts', ALICE, write('ts', b'1'))
os.utime(P('ts'), ns=(1000000000_000000000, 1000000000_000000000))
st0 = os.stat(P('ts'))
time.sleep(0.02)
check('alice writes ts', ALICE, write('ts', b'2', flags=os.O_WRONLY | os.O_APPEND))
st1 = os.stat(P('ts'))
out.append('ts write: mtime changed=%s ctime changed=%s atime kept=%s' % (
    st1.st_mtime_ns > st0.st_mtime_ns, st1.st_ctime_ns > st0.st_ctime_ns,
    st1.st_atime_ns == st0.st_atime_ns))
check('alice utimensat atime only', ALICE,
      lambda: os.utime(P('ts'), ns=(1234567890_000000005, os.stat(P('ts')).st_mtime_ns)))
st2 = os.stat(P('ts'))
out.append('ts utime: atime=%d mtime kept=%s ctime changed=%s' % (
    st2.st_atime_ns, st2.st_mtime_ns == st1.st_mtime_ns, st2.st_ctime_ns >= st1.st_ctime_ns))
time.sleep(0.02)
check('alice chmod ts', ALICE, lambda: os.chmod(P('ts'), 0o640))
st3 = os.stat(P('ts'))
out.append('ts chmod: ctime changed=%s mtime kept=%s' % (
    st3.st_ctime_ns > st2.st_ctime_ns, st3.st_mtime_ns == st2.st_mtime_ns))
d0 = os.stat(base)
time.sleep(0.02)
check('alice creates ts2', ALICE, write('ts2'))
d1 = os.stat(base)
out.append('dir after create: mtime changed=%s' % (d1.st_mtime_ns > d0.st_mtime_ns))

# --- xattrs a root daemon must not write for an unprivileged caller ---
check('alice sets trusted.x', ALICE, lambda: os.setxattr(P('t'), 'trusted.x', b'1'))
check('alice sets security.capability', ALICE,
      lambda: os.setxattr(P('t'), 'security.capability', b'\x01\x00\x00\x02' + b'\x00' * 16))

print('\n'.join(out))
