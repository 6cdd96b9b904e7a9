# rb-rio-video T3's 10-20 s without the responsive streams, in real ns-2.35: 20 FTP
# (Agent/TCP/Newreno, packetSize_ 960, into Agent/TCPSink) for the whole run and 20
# unresponsive MPEG-1 streams from 10 s to 20 s, DropTail and RED on the study's stated
# set-up (as ns2/t1.tcl: 20 host pairs, 100 Mbit/s access, left 2 ms, right U[3, 43] ms,
# bottleneck 25 Mbit/s, 5 ms, queue-limit 100; RED thresh_ 20, maxthresh_ 60 in packet
# mode, the rest ns-2.35's defaults). It checks the TCP/UDP split that T3's "RED gives
# TCP more than DropTail in 10-20 s" is about, with no responsive application involved
# (ns-2 has no MPEG application; its TFRC has no frame dropping).
#
# Unresponsive MPEG as aqmlab's `video` sends it (docs/traffic/video.md): frames of the
# GOP IBBPBBPBB every 1/30 s from the stream's start (10 s + U[0, 100 ms]), I/P/B 11000 /
# 8000 / 2000 B of payload with 40 B of headers per packet, all packets of a frame back
# to back. Agent/UDP (packetSize_ 1000) splits a message of n bytes into n / 1000 packets
# of 1000 B and one of the rest (apps/udp.cc:74-112, UdpAgent::sendmsg), so a frame is sent as
# one message of payload + 40 B x packets: I 11480 B -> 11 x 1000 + 480, P 8360 B,
# B 2120 B -- the packets aqmlab sends.
#
# Prints INFO lines only (no paper.toml number: the paper's Figure 8 has no values):
#   INFO t3u <DropTail|RED> tcp_mbps=<mean over seeds 1-6> udp_mbps=<...>
# TCP: the senders' cumulative ACKs x 960 B over 10-20 s; UDP: LossMonitor bytes.
#   ns t3u.tcl QTYPE SEED   one run: prints "RES tcp_mbps udp_mbps"

set SEEDS {1 2 3 4 5 6}

proc run {qtype seed} {
    global defaultRNG
    $defaultRNG seed $seed
    set ns [new Simulator]
    set rng [new RNG]
    $rng seed $seed
    set r1 [$ns node]
    set r2 [$ns node]
    $ns duplex-link $r1 $r2 25Mb 5ms $qtype
    $ns queue-limit $r1 $r2 100
    if {$qtype == "RED"} {
        set q [[$ns link $r1 $r2] queue]
        $q set thresh_ 20
        $q set maxthresh_ 60
        $q set bytes_ false
        $q set queue_in_bytes_ false
    }
    set qmon [$ns monitor-queue $r1 $r2 ""]
    for {set i 0} {$i < 20} {incr i} {
        set s($i) [$ns node]
        set d($i) [$ns node]
        set dr [$rng uniform 0.003 0.043]
        $ns duplex-link $s($i) $r1 100Mb 2ms DropTail
        $ns duplex-link $r2 $d($i) 100Mb ${dr} DropTail
        foreach {a b} [list $s($i) $r1 $r1 $s($i) $r2 $d($i) $d($i) $r2] { $ns queue-limit $a $b 1000 }
    }
    set ::tcps {}
    for {set i 0} {$i < 20} {incr i} {
        set tcp [new Agent/TCP/Newreno]
        $tcp set packetSize_ 960
        set sink [new Agent/TCPSink]
        $ns attach-agent $s($i) $tcp
        $ns attach-agent $d($i) $sink
        $ns connect $tcp $sink
        set ftp [new Application/FTP]
        $ftp attach-agent $tcp
        $ns at [$rng uniform 0 0.1] "$ftp start"
        lappend ::tcps $tcp
    }
    set ::mons {}
    set sizes {11480 2120 2120 8360 2120 2120 8360 2120 2120}
    for {set i 0} {$i < 20} {incr i} {
        set udp [new Agent/UDP]
        $udp set packetSize_ 1000
        set mon [new Agent/LossMonitor]
        $ns attach-agent $s($i) $udp
        $ns attach-agent $d($i) $mon
        $ns connect $udp $mon
        lappend ::mons $mon
        set t0 [expr {10.0 + [$rng uniform 0 0.1]}]
        for {set k 0} {$t0 + $k / 30.0 < 20.0} {incr k} {
            $ns at [expr {$t0 + $k / 30.0}] "$udp send [lindex $sizes [expr {$k % 9}]]"
        }
    }
    $ns at 10.0 "snap 10"
    $ns at 20.0 "snap 20"
    $ns at 20.0001 "$ns halt"
    $ns run
    set tcp_mbps [expr {($::ack(20) - $::ack(10)) * 960 * 8 / 10.0 / 1e6}]
    set udp_mbps [expr {($::ub(20) - $::ub(10)) * 8 / 10.0 / 1e6}]
    puts "RES $tcp_mbps $udp_mbps"
}
proc snap {t} {
    set a 0
    foreach tcp $::tcps { incr a [$tcp set ack_] }
    set b 0
    foreach m $::mons { incr b [$m set bytes_] }
    set ::ack($t) $a
    set ::ub($t) $b
}

# One ns process per run (a second Simulator in the same process is not clean).
if {$argc == 2} {
    run [lindex $argv 0] [lindex $argv 1]
    exit 0
}
foreach qtype {DropTail RED} {
    set st 0.0
    set su 0.0
    foreach seed $SEEDS {
        set out [exec [info nameofexecutable] [info script] $qtype $seed]
        foreach line [split $out "\n"] {
            if {[lindex $line 0] == "RES"} {
                set st [expr {$st + [lindex $line 1]}]
                set su [expr {$su + [lindex $line 2]}]
            }
        }
    }
    set n [llength $SEEDS]
    puts [format "INFO t3u %s tcp_mbps=%.3f udp_mbps=%.3f" $qtype [expr {$st / $n}] [expr {$su / $n}]]
}
