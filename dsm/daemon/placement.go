package daemon

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// HostSlots is a node and how many ranks it takes in one round.
type HostSlots struct {
	Node  string
	Slots int
}

// ParseHosts reads the --hosts list: NODE[:SLOTS],... with one slot where
// none is given.
func ParseHosts(s string) ([]HostSlots, error) {
	var hosts []HostSlots
	for item := range strings.SplitSeq(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			return nil, fmt.Errorf("hosts %q: an empty entry", s)
		}
		h, err := parseHost(item, "")
		if err != nil {
			return nil, fmt.Errorf("hosts %q: %w", s, err)
		}
		hosts = append(hosts, h)
	}
	return hosts, nil
}

// parseHost reads NODE[:SLOTS], or NODE slots=N when slotsField is given.
func parseHost(node, slotsField string) (HostSlots, error) {
	slots := ""
	if name, n, ok := strings.Cut(node, ":"); ok {
		node, slots = name, n
	}
	if slotsField != "" {
		if slots != "" {
			return HostSlots{}, fmt.Errorf("node %q: slots given twice", node)
		}
		slots = slotsField
	}
	if err := checkNodeName(node); err != nil {
		return HostSlots{}, err
	}
	h := HostSlots{Node: node, Slots: 1}
	if slots != "" {
		n, err := strconv.Atoi(slots)
		if err != nil || n < 1 || n > maxSlots {
			return HostSlots{}, fmt.Errorf("node %q: slots %q: want a number from 1 to %d", node, slots, maxSlots)
		}
		h.Slots = n
	}
	return h, nil
}

const maxSlots = 4096

// checkNodeName accepts the names a node may have: what a hostname may
// hold, so that names read the same in configuration, hostfiles and logs.
func checkNodeName(name string) error {
	if name == "" || len(name) > 253 {
		return fmt.Errorf("node name %q: want 1 to 253 characters", name)
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_') {
			return fmt.Errorf("node name %q: %q is not a letter, digit, '-', '.' or '_'", name, c)
		}
	}
	return nil
}

// ParseHostfile reads a hostfile as mpirun users write them: one node per
// line, as "node", "node:4" (MPICH) or "node slots=4" (Open MPI; other
// key=value fields such as max_slots are read and ignored), with # comments
// and blank lines. A node listed twice adds its slots.
func ParseHostfile(r io.Reader) ([]HostSlots, error) {
	var hosts []HostSlots
	index := map[string]int{}
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		text, _, _ := strings.Cut(sc.Text(), "#")
		fields := strings.Fields(text)
		if len(fields) == 0 {
			continue
		}
		slots := ""
		for _, f := range fields[1:] {
			key, value, ok := strings.Cut(f, "=")
			switch {
			case !ok:
				return nil, fmt.Errorf("hostfile line %d: %q is not key=value", line, f)
			case key == "slots":
				slots = value
			case key == "max_slots" || key == "max-slots":
			default:
				return nil, fmt.Errorf("hostfile line %d: unknown field %q (want slots=N)", line, key)
			}
		}
		h, err := parseHost(fields[0], slots)
		if err != nil {
			return nil, fmt.Errorf("hostfile line %d: %w", line, err)
		}
		if i, ok := index[h.Node]; ok {
			hosts[i].Slots += h.Slots
			continue
		}
		index[h.Node] = len(hosts)
		hosts = append(hosts, h)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("hostfile: %w", err)
	}
	if len(hosts) == 0 {
		return nil, fmt.Errorf("hostfile: no nodes")
	}
	return hosts, nil
}

// Place puts np ranks on the hosts by slot, as mpirun does: the first
// node's slots take the first ranks, then the next node's, and when every
// slot is taken the rounds start again from the first node. It returns
// each rank's node.
func Place(np int, hosts []HostSlots) ([]string, error) {
	if np < 1 {
		return nil, fmt.Errorf("%d ranks: want at least 1", np)
	}
	if len(hosts) == 0 {
		return nil, fmt.Errorf("no hosts to place %d ranks on", np)
	}
	seen := map[string]bool{}
	for _, h := range hosts {
		if seen[h.Node] {
			return nil, fmt.Errorf("node %q is listed twice", h.Node)
		}
		seen[h.Node] = true
		if h.Slots < 1 {
			return nil, fmt.Errorf("node %q: %d slots", h.Node, h.Slots)
		}
	}
	placement := make([]string, 0, np)
	for len(placement) < np {
		for _, h := range hosts {
			for s := 0; s < h.Slots && len(placement) < np; s++ {
				placement = append(placement, h.Node)
			}
		}
	}
	return placement, nil
}
