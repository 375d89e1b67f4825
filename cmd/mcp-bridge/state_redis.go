package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"

	"github.com/mcp-bridge/mcp-bridge/internal/config"
	"github.com/mcp-bridge/mcp-bridge/internal/state"
)

// redisOptions translates state.redis; nil without it. Its errors name the file that cannot be used.
func redisOptions(r *config.StateRedis) (*state.RedisOptions, error) {
	if r == nil {
		return nil, nil
	}
	o := &state.RedisOptions{
		Address:   r.Address,
		Username:  r.Username.Reveal(),
		Password:  r.Password.Reveal(),
		KeyPrefix: r.KeyPrefix,
	}
	if r.TLS {
		host, _, _ := net.SplitHostPort(r.Address)
		o.TLS = &tls.Config{MinVersion: tls.VersionTLS12, ServerName: host}
		if r.ServerName != "" {
			o.TLS.ServerName = r.ServerName
		}
		if r.CAFile != "" {
			pem, err := os.ReadFile(r.CAFile)
			if err != nil {
				return nil, fmt.Errorf("state.redis.caFile: %v", err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("state.redis.caFile %s: no PEM certificate in it", r.CAFile)
			}
			o.TLS.RootCAs = pool
		}
	}
	return o, nil
}
