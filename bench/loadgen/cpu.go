package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// CPU accounting from /proc (Linux only; elsewhere every figure is simply absent). It answers the
// question a same-machine benchmark raises: who spent the two cores — the server under test,
// Redis, PostgreSQL, the load generator itself, or something else on the machine.

const clockTicks = 100 // USER_HZ: /proc reports CPU time in 1/100 s on every Linux the Go runtime supports

// procSet names a group of processes: one or more pids, every process whose comm is a name, or a
// process and all its descendants (one PostgreSQL cluster of several on a machine: its postmaster
// and the backends it forks while a row runs).
type procSet struct {
	Label string
	pids  []int
	comm  string
	tree  int
}

// parseProcSet reads LABEL=PID[,PID...], LABEL=comm:NAME or LABEL=tree:PID.
func parseProcSet(s string) (procSet, error) {
	label, spec, ok := strings.Cut(s, "=")
	if !ok || label == "" || spec == "" {
		return procSet{}, fmt.Errorf("-cpu %q: want LABEL=PID[,PID...], LABEL=comm:NAME or LABEL=tree:PID", s)
	}
	if name, ok := strings.CutPrefix(spec, "comm:"); ok {
		return procSet{Label: label, comm: name}, nil
	}
	if root, ok := strings.CutPrefix(spec, "tree:"); ok {
		pid, err := strconv.Atoi(root)
		if err != nil || pid <= 0 {
			return procSet{}, fmt.Errorf("-cpu %q: %q is not a pid", s, root)
		}
		return procSet{Label: label, tree: pid}, nil
	}
	ps := procSet{Label: label}
	for _, f := range strings.Split(spec, ",") {
		pid, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || pid <= 0 {
			return procSet{}, fmt.Errorf("-cpu %q: %q is not a pid", s, f)
		}
		ps.pids = append(ps.pids, pid)
	}
	return ps, nil
}

// cpuSample is the CPU time (in clock ticks) of each tracked process, and of the whole machine.
type cpuSample struct {
	procs       map[string]map[int]uint64 // label -> pid -> utime+stime
	machineBusy uint64                    // all CPUs: user, system, irq, softirq
	machineIRQ  uint64                    // all CPUs: irq, softirq
	machineStl  uint64                    // all CPUs: steal
	ok          bool
}

func takeCPUSample(sets []procSet) cpuSample {
	s := cpuSample{procs: make(map[string]map[int]uint64, len(sets))}
	busy, irq, steal, err := machineTicks()
	if err != nil {
		return s
	}
	s.machineBusy, s.machineIRQ, s.machineStl, s.ok = busy, irq, steal, true
	for _, set := range sets {
		m := map[int]uint64{}
		pids := set.pids
		switch {
		case set.comm != "":
			pids = pidsByComm(set.comm)
		case set.tree != 0:
			pids = pidsInTree(set.tree)
		}
		for _, pid := range pids {
			if t, err := procTicks(pid); err == nil {
				m[pid] = t
			}
		}
		s.procs[set.Label] = m
	}
	return s
}

// cpuDelta is CPU seconds used between two samples, per label, plus the machine's busy time.
type cpuDelta struct {
	Seconds      map[string]float64 `json:"seconds"`
	MachineBusy  float64            `json:"machineBusySeconds"`  // includes IRQ
	MachineIRQ   float64            `json:"machineIrqSeconds"`   // irq+softirq, charged to no process
	MachineSteal float64            `json:"machineStealSeconds"` // taken by the hypervisor`
}

func diffCPU(a, b cpuSample, sets []procSet) (cpuDelta, bool) {
	if !a.ok || !b.ok {
		return cpuDelta{}, false
	}
	d := cpuDelta{Seconds: map[string]float64{}}
	for _, set := range sets {
		var ticks uint64
		for pid, t1 := range b.procs[set.Label] {
			if t0, ok := a.procs[set.Label][pid]; ok && t1 >= t0 {
				ticks += t1 - t0
			} else if !ok {
				ticks += t1 // a process born during the window: all its time is in the window
			}
		}
		d.Seconds[set.Label] = float64(ticks) / clockTicks
	}
	d.MachineBusy = float64(b.machineBusy-a.machineBusy) / clockTicks
	d.MachineIRQ = float64(b.machineIRQ-a.machineIRQ) / clockTicks
	d.MachineSteal = float64(b.machineStl-a.machineStl) / clockTicks
	return d, true
}

// procTicks is utime+stime of pid, from /proc/PID/stat.
func procTicks(pid int) (uint64, error) {
	f, err := statFields(pid)
	if err != nil {
		return 0, err
	}
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: too few fields", pid)
	}
	ut, err1 := strconv.ParseUint(f[11], 10, 64) // field 14
	st, err2 := strconv.ParseUint(f[12], 10, 64) // field 15
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: bad utime/stime", pid)
	}
	return ut + st, nil
}

// statFields are the fields of /proc/PID/stat after the command name (field 3 onwards). The name
// (field 2) may contain spaces and parentheses: the fields start after the last ')'.
func statFields(pid int) ([]string, error) {
	raw, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return nil, err
	}
	i := strings.LastIndexByte(string(raw), ')')
	if i < 0 {
		return nil, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	return strings.Fields(string(raw[i+1:])), nil
}

// pidsByComm lists the processes whose comm (short name) is name.
func pidsByComm(name string) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		comm, err := os.ReadFile(filepath.Join("/proc", e.Name(), "comm"))
		if err == nil && strings.TrimSpace(string(comm)) == name {
			out = append(out, pid)
		}
	}
	return out
}

// pidsInTree lists root and every process descended from it.
func pidsInTree(root int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, err := parentOf(pid); err == nil {
			children[ppid] = append(children[ppid], pid)
		}
	}
	out := []int{root}
	for i := 0; i < len(out); i++ {
		out = append(out, children[out[i]]...)
	}
	return out
}

// parentOf is pid's parent, from /proc/PID/stat (field 4).
func parentOf(pid int) (int, error) {
	f, err := statFields(pid)
	if err != nil {
		return 0, err
	}
	if len(f) < 2 {
		return 0, fmt.Errorf("/proc/%d/stat: too few fields", pid)
	}
	return strconv.Atoi(f[1])
}

// machineTicks reads the first line of /proc/stat (all CPUs): busy is user+nice+system+irq+
// softirq, irq is irq+softirq (loopback TCP is largely processed there and charged to no process),
// steal is time the hypervisor gave to other guests (not ours, so not busy).
func machineTicks() (busy, irq, steal uint64, err error) {
	raw, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, 0, err
	}
	line, _, _ := strings.Cut(string(raw), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0, 0, 0, fmt.Errorf("/proc/stat: unexpected format")
	}
	var v [8]uint64 // user nice system idle iowait irq softirq steal
	for i := range v {
		if v[i], err = strconv.ParseUint(f[i+1], 10, 64); err != nil {
			return 0, 0, 0, err
		}
	}
	return v[0] + v[1] + v[2] + v[5] + v[6], v[5] + v[6], v[7], nil
}
