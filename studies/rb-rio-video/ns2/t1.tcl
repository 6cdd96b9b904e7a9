# rb-rio-video T1 (TCP only) in real ns-2.35 on the study's stated set-up
# (studies/rb-rio-video/scenario.toml + experiments/T1.toml), DropTail and RED.
# Run by `aqmlab study ns2 rb-rio-video`; prints `SCORE <paper.toml id> <value>`.
#
# Set-up (the same as the aqmlab study; see the README's set-up table):
# - 20 host pairs s_i -- r1 -- r2 -- d_i; access links 100 Mbit/s, left 2 ms, right
#   U[3, 43] ms drawn per pair and per run; bottleneck r1 -> r2 25 Mbit/s, 5 ms.
# - Bottleneck buffer: queue-limit 100 packets ("the physical queue size of network
#   routers to 100 packets"). Access links get 1000 packets (they never queue).
# - TCP: Agent/TCP/Newreno ("use New-Reno for the TCP agents") with its ns-2.35
#   defaults except packetSize_ 960 (a 1000 B IP packet with the 40 B header:
#   "maximum IP packet size to 1Kbyte"), into Agent/TCPSink (ns-2's default sink; the
#   paper names none). FTP over each: 2 per pair from 0 s (40), 1 more per pair from
#   10 s to 20 s (20); each start is delayed by U[0, 100 ms] (the study's jitter).
# - RED: thresh_ 20, maxthresh_ 60 (Section 4.1), everything else ns-2.35's default
#   (tcl/lib/ns-default.tcl): linterm_ 10 (max_p 0.1), q_weight_ -1 (automatic:
#   1 - exp(-1/(10 * max(0.1 s, 3 * (delay + 1/C)) * C)), C = bandwidth / (8 *
#   mean_pktsize_) = 6250 pkt/s, so 0.0016; red.cc `REDQueue::initParams`), gentle_ true,
#   mean_pktsize_ 500, wait_ true; bytes_/queue_in_bytes_ set false (packet mode, below).
# - Statistics per period (0-10, 10-20, 20-30 s) from a queue monitor on r1 -> r2:
#   drop rate = drops / arrivals (%), utilisation = departed bytes x 8 / 10 s (Mbit/s).
# Each value is the mean over seeds 1..10 (the study's seed count; ~0.6 s a run).

set SEEDS {1 2 3 4 5 6 7 8 9 10}

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
        # packet mode: the paper's thresholds and 100-packet buffer are in packets;
        # ns-2.35's byte-mode defaults (bytes_, queue_in_bytes_ true, ns-default.tcl:
        # 122-123) would make the buffer 100 x mean_pktsize_ 500 = 50 packets of 1000 B
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
        $ns queue-limit $s($i) $r1 1000
        $ns queue-limit $r1 $s($i) 1000
        $ns queue-limit $r2 $d($i) 1000
        $ns queue-limit $d($i) $r2 1000
    }
    set n 0
    foreach {count t0 t1} {2 0.0 30.0 1 10.0 20.0} {
        for {set k 0} {$k < $count} {incr k} {
            for {set i 0} {$i < 20} {incr i} {
                set tcp [new Agent/TCP/Newreno]
                $tcp set packetSize_ 960
                $tcp set fid_ $n
                set sink [new Agent/TCPSink]
                $ns attach-agent $s($i) $tcp
                $ns attach-agent $d($i) $sink
                $ns connect $tcp $sink
                set ftp [new Application/FTP]
                $ftp attach-agent $tcp
                $ns at [expr {$t0 + [$rng uniform 0 0.1]}] "$ftp start"
                if {$t1 < 30.0} { $ns at $t1 "$ftp stop" }
                incr n
            }
        }
    }
    foreach t {10 20 30} {
        $ns at $t "sample $qmon $qtype $seed $t"
    }
    $ns at 30.0001 "$ns halt"
    $ns run
}

proc sample {qmon qtype seed t} {
    global last
    set a [$qmon set parrivals_]
    set dr [$qmon set pdrops_]
    set b [$qmon set bdepartures_]
    if {$t == 10} { set last($qtype,$seed) {0 0 0} }
    foreach {a0 d0 b0} $last($qtype,$seed) break
    puts "RES $t [list [expr {100.0 * ($dr - $d0) / ($a - $a0)}] [expr {($b - $b0) * 8.0 / 10.0 / 1e6}]]"
    set last($qtype,$seed) [list $a $dr $b]
}

# One ns process per run (a second Simulator in the same process is not clean):
# the script calls itself with "<qtype> <seed>" and reads the RES lines.
if {$argc == 2} {
    run [lindex $argv 0] [lindex $argv 1]
    exit 0
}
foreach {qtype tag} {DropTail dt RED red} {
    foreach seed $SEEDS {
        set out [exec [info nameofexecutable] [info script] $qtype $seed]
        foreach line [split $out "\n"] {
            if {[lindex $line 0] == "RES"} { set res($qtype,$seed,[lindex $line 1]) [lrange $line 2 3] }
        }
    }
    foreach {t per} {10 0-10 20 10-20 30 20-30} {
        set sd 0.0; set su 0.0
        foreach seed $SEEDS {
            foreach {dr u} $res($qtype,$seed,$t) break
            set sd [expr {$sd + $dr}]; set su [expr {$su + $u}]
        }
        set ns_ [llength $SEEDS]
        puts [format "SCORE T1-%s-%s-drop %.3f" $per $tag [expr {$sd / $ns_}]]
        puts [format "SCORE T1-%s-%s-util %.3f" $per $tag [expr {$su / $ns_}]]
    }
}
