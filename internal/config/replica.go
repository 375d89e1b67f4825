package config

import "fmt"

// maxReplicaLength is a DNS label's: a StatefulSet pod's name fits.
const maxReplicaLength = 63

// CheckReplica reports whether name can name a replica (sessions.replica, --replica): 1 to 63 lower-case
// letters, digits and '-', starting and ending with a letter or digit (a DNS label, as a pod's name is).
func CheckReplica(name string) error {
	if name == "" || len(name) > maxReplicaLength {
		return fmt.Errorf("a replica name has 1 to %d characters", maxReplicaLength)
	}
	for i, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
		case r == '-' && i > 0 && i < len(name)-1:
		default:
			return fmt.Errorf("replica name %q is not a DNS label: use lower-case letters, digits and '-' (not first or last)", name)
		}
	}
	return nil
}

func (c *Config) validateReplica() error {
	if c.Sessions.Replica != "" {
		if err := CheckReplica(c.Sessions.Replica); err != nil {
			return c.errorAt("sessions.replica", err.Error())
		}
	}
	for i, p := range c.Sessions.Peers {
		if err := CheckAddr(p); err != nil {
			return c.errorAt(fmt.Sprintf("sessions.peers[%d]", i), err.Error())
		}
	}
	if len(c.Sessions.Peers) > 0 && c.TLS.Enabled() {
		return c.errorAt("sessions.peers", "peers are reached over plaintext gRPC, which a bridge with tls does not serve")
	}
	return nil
}
