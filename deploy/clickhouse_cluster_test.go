package deploy_test

import (
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// clusterXML is the part of deploy/clickhouse-cluster/config/cluster.xml the test reads.
type clusterXML struct {
	RemoteServers struct {
		Gpuprice struct {
			Secret struct {
				FromEnv string `xml:"from_env,attr"`
			} `xml:"secret"`
			Shards []struct {
				InternalReplication bool `xml:"internal_replication"`
				Replicas            []struct {
					Host string `xml:"host"`
					Port int    `xml:"port"`
				} `xml:"replica"`
			} `xml:"shard"`
		} `xml:"gpuprice"`
	} `xml:"remote_servers"`
	Zookeeper struct {
		Nodes []struct {
			Host string `xml:"host"`
			Port int    `xml:"port"`
		} `xml:"node"`
	} `xml:"zookeeper"`
	Macros struct {
		Cluster string `xml:"cluster"`
		Shard   struct {
			FromEnv string `xml:"from_env,attr"`
		} `xml:"shard"`
		Replica struct {
			FromEnv string `xml:"from_env,attr"`
		} `xml:"replica"`
	} `xml:"macros"`
	DistributedDDL struct {
		Path string `xml:"path"`
	} `xml:"distributed_ddl"`
}

type keeperXML struct {
	KeeperServer struct {
		TCPPort  int `xml:"tcp_port"`
		ServerID struct {
			FromEnv string `xml:"from_env,attr"`
		} `xml:"server_id"`
		Servers []struct {
			ID       int    `xml:"id"`
			Hostname string `xml:"hostname"`
		} `xml:"raft_configuration>server"`
	} `xml:"keeper_server"`
}

func loadXML(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := xml.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// TestClickHouseClusterCompose checks deploy/clickhouse-cluster without Docker: the
// compose file's four ClickHouse servers and three Keeper servers agree with the
// cluster config (2 shards × 2 replicas named gpuprice, internal replication, each
// server's CH_SHARD and CH_REPLICA macros matching its place), Keeper's quorum, the
// in_order load balancing gpuprice migrate requires (there and in local.sh), pinned
// images, health checks, depends_on healthy Keeper, ports on 127.0.0.1 only, and
// mounted files that exist.
func TestClickHouseClusterCompose(t *testing.T) {
	const dir = "clickhouse-cluster"
	var c composeFile
	loadYAML(t, filepath.Join(dir, "docker-compose.yml"), &c)
	var cl clusterXML
	loadXML(t, filepath.Join(dir, "config", "cluster.xml"), &cl)
	var kp keeperXML
	loadXML(t, filepath.Join(dir, "config", "keeper.xml"), &kp)

	var keepers, servers []string
	for name, s := range c.Services {
		switch {
		case strings.HasPrefix(s.Image, "clickhouse/clickhouse-keeper:"):
			keepers = append(keepers, name)
		case strings.HasPrefix(s.Image, "clickhouse/clickhouse-server:"):
			servers = append(servers, name)
		default:
			t.Errorf("service %s: unexpected image %q", name, s.Image)
		}
		if !pinned(s.Image) {
			t.Errorf("service %s: image %q is not pinned", name, s.Image)
		}
		if len(s.Healthcheck.Test) == 0 {
			t.Errorf("service %s: no health check", name)
		}
		for _, p := range s.Ports {
			if !strings.HasPrefix(p, "127.0.0.1:") {
				t.Errorf("service %s: port %q published beyond 127.0.0.1", name, p)
			}
		}
		for _, v := range s.Volumes {
			src, _, _ := strings.Cut(v, ":")
			if strings.HasPrefix(src, "./") {
				if _, err := os.Stat(filepath.Join(dir, src)); err != nil {
					t.Errorf("service %s mounts %s: %v", name, src, err)
				}
			} else if _, ok := c.Volumes[src]; !ok {
				t.Errorf("service %s: volume %s not declared", name, src)
			}
		}
	}
	slices.Sort(keepers)
	slices.Sort(servers)
	if len(keepers) != 3 || len(servers) != 4 {
		t.Fatalf("%d keepers %v and %d servers %v, want 3 and 4", len(keepers), keepers, len(servers), servers)
	}

	// Keeper: three servers, ids 1..3, hostnames the services.
	if kp.KeeperServer.ServerID.FromEnv != "KEEPER_SERVER_ID" || len(kp.KeeperServer.Servers) != 3 {
		t.Fatalf("keeper.xml: %+v", kp.KeeperServer)
	}
	for i, s := range kp.KeeperServer.Servers {
		if s.ID != i+1 || s.Hostname != keepers[i] {
			t.Errorf("keeper raft server %d: %+v, want id %d host %s", i, s, i+1, keepers[i])
		}
		if got := c.Services[keepers[i]].Environment["KEEPER_SERVER_ID"]; got != fmt.Sprint(i+1) {
			t.Errorf("%s: KEEPER_SERVER_ID %q, want %d", keepers[i], got, i+1)
		}
	}
	var zk []string
	for _, n := range cl.Zookeeper.Nodes {
		zk = append(zk, n.Host)
		if n.Port != kp.KeeperServer.TCPPort {
			t.Errorf("zookeeper node %s port %d, Keeper listens on %d", n.Host, n.Port, kp.KeeperServer.TCPPort)
		}
	}
	if !slices.Equal(zk, keepers) {
		t.Errorf("cluster.xml's zookeeper nodes %v, want the keepers %v", zk, keepers)
	}

	// The cluster: 2 shards × 2 replicas, every server once, in its own shard.
	g := cl.RemoteServers.Gpuprice
	if len(g.Shards) != 2 || cl.Macros.Cluster != "gpuprice" || cl.DistributedDDL.Path == "" ||
		cl.Macros.Shard.FromEnv != "CH_SHARD" || cl.Macros.Replica.FromEnv != "CH_REPLICA" || g.Secret.FromEnv == "" {
		t.Fatalf("cluster.xml: %+v", cl)
	}
	seen := map[string]bool{}
	for i, sh := range g.Shards {
		if !sh.InternalReplication || len(sh.Replicas) != 2 {
			t.Errorf("shard %d: internal_replication %v, %d replicas", i+1, sh.InternalReplication, len(sh.Replicas))
		}
		for _, r := range sh.Replicas {
			s, ok := c.Services[r.Host]
			if !ok || r.Port != 9000 || seen[r.Host] {
				t.Errorf("shard %d replica %s:%d: not a service on 9000, or listed twice", i+1, r.Host, r.Port)
				continue
			}
			seen[r.Host] = true
			env := s.Environment
			if env["CH_SHARD"] != fmt.Sprint(i+1) || env["CH_REPLICA"] != r.Host {
				t.Errorf("%s: CH_SHARD %q CH_REPLICA %q, want %d and %s", r.Host, env["CH_SHARD"], env["CH_REPLICA"], i+1, r.Host)
			}
			if env[g.Secret.FromEnv] == "" || env["CLICKHOUSE_PASSWORD"] == "" {
				t.Errorf("%s: no cluster secret or password in its environment", r.Host)
			}
			for _, k := range keepers {
				if s.DependsOn[k].Condition != "service_healthy" {
					t.Errorf("%s does not wait for %s to be healthy", r.Host, k)
				}
			}
			var mounted []string
			for _, v := range s.Volumes {
				mounted = append(mounted, strings.Split(v, ":")[1])
			}
			for _, want := range []string{"/etc/clickhouse-server/config.d/cluster.xml", "/etc/clickhouse-server/users.d/gpuprice.xml"} {
				if !slices.Contains(mounted, want) {
					t.Errorf("%s does not mount %s", r.Host, want)
				}
			}
		}
	}
	if len(seen) != 4 {
		t.Errorf("the cluster lists %d of the 4 servers", len(seen))
	}

	// gpuprice migrate refuses a cluster without consistent load balancing.
	var users struct {
		LB string `xml:"profiles>default>load_balancing"`
	}
	loadXML(t, filepath.Join(dir, "config", "users.d", "gpuprice.xml"), &users)
	if users.LB != "in_order" {
		t.Errorf("users.d/gpuprice.xml: load_balancing %q, want in_order", users.LB)
	}
	local, err := os.ReadFile(filepath.Join(dir, "local.sh"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<load_balancing>in_order</load_balancing>", "<internal_replication>true</internal_replication>", "CLUSTER=gpuprice"} {
		if !strings.Contains(string(local), want) {
			t.Errorf("local.sh lacks %s", want)
		}
	}
}
