// Command dns-standin stands in for the CoreDNS image the Gateway API
// suite's base manifests run as the backend of its UDPRoute tests. Orca
// implements no UDPRoute and this machine reaches no outside resolver, so
// the stand-in only has to come up and answer: it reads the Corefile it is
// given (to fail as CoreDNS would when the file is missing) and refuses
// every query on UDP port 53.
package main

import (
	"encoding/binary"
	"flag"
	"log"
	"net"
	"os"
)

func main() {
	conf := flag.String("conf", "Corefile", "the Corefile (read, not interpreted)")
	flag.Parse()
	if _, err := os.ReadFile(*conf); err != nil {
		log.Fatal(err)
	}
	conn, err := net.ListenPacket("udp", ":53")
	if err != nil {
		log.Fatal(err)
	}
	buf := make([]byte, 512)
	for {
		n, addr, err := conn.ReadFrom(buf)
		if err != nil {
			log.Fatal(err)
		}
		if reply := refuse(buf[:n]); reply != nil {
			_, _ = conn.WriteTo(reply, addr)
		}
	}
}

// refuse turns a query into its REFUSED answer: the same ID, opcode,
// recursion-desired bit and question, QR set, no records.
func refuse(query []byte) []byte {
	const header = 12
	if len(query) < header || query[2]&0x80 != 0 {
		return nil
	}
	end := header
	if binary.BigEndian.Uint16(query[4:6]) == 1 {
		end = questionEnd(query, header)
	}
	reply := append([]byte(nil), query[:end]...)
	flags := binary.BigEndian.Uint16(query[2:4])
	flags = 0x8000 | flags&0x7900 | 5 // QR, opcode and RD kept, RCODE REFUSED
	binary.BigEndian.PutUint16(reply[2:4], flags)
	if end == header {
		binary.BigEndian.PutUint16(reply[4:6], 0)
	}
	for i := 6; i < header; i++ { // no answer, authority or additional records
		reply[i] = 0
	}
	return reply
}

// questionEnd is the offset after the question starting at off (a name of
// uncompressed labels, then type and class), or off when it is malformed.
func questionEnd(msg []byte, off int) int {
	i := off
	for i < len(msg) && msg[i] != 0 {
		if msg[i]&0xc0 != 0 {
			return off
		}
		i += 1 + int(msg[i])
	}
	if i+5 > len(msg) {
		return off
	}
	return i + 5
}
