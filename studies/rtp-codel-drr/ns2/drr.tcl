# ns-2.35 reconstruction of Ahmed's experiment (rtp-codel-drr): six-node dumbbell S1, S2 ->
# A -> B -> R1, R2, one Agent/RTP source per sender (apps/rtp.cc: fixed packetSize_, a
# packet every interval_, random_ 1 = uniform +-50 % noise on each gap, rtp.cc:129-133),
# Agent/LossMonitor sinks at R1, R2. ns-2.35 has Queue/DRR but no CoDel: the DRR half
# always runs; the CoDel half runs when codel.so (Nichols's codel.cc, built by
# build-codel.sh next to this script) exists, preloaded into each ns run.
#
#   ns drr.tcl            prints SCORE <paper.toml id> <value> for Tables 3.4, 3.6, 3.8,
#                         3.10 (received, mean size, per receiver) and 3.1/3.2 (sent, DRR
#                         rows) -- with codel.so also Tables 3.3, 3.5, 3.7, 3.9 and the
#                         CoDel rows of 3.1/3.2 -- and INFO lines: each discipline's mean
#                         bottleneck sojourn, DropTail (the same buffer), and the sources
#                         active the whole 10 s (the study's former set-up).
#   ns drr.tcl ONE rate access disc start n1 n2   one run: prints S1/S2 packets sent,
#                         R1/R2 packets and bytes received, the bottleneck's mean sojourn
#                         (ms) of the packets it sent (from a trace-queue of A->B); disc
#                         DRR, DropTail, or CoDel (needs LD_PRELOAD=codel.so)
#
# Set-up (as studies/rtp-codel-drr/scenario.toml; see its README "Set-up: paper vs aqmlab"):
# - bottleneck A->B 1..10 Mbit/s, 10 ms (assumed); S1->A 1 or 5 Mbit/s, S2->A 10 Mbit/s,
#   B->R 100 Mbit/s, 1 ms (assumed);
# - DRR: ns-2.35 defaults (tcl/lib/ns-default.tcl:271-274: buckets_ 10, blimit_ 25000 B =
#   50 packets of 500 B, quantum_ 250, mask_ 0); DropTail: Queue set limit_ 50
#   (ns-default.tcl:86), the ns-2 default every other queue of the topology keeps;
# - sources: 515 B packets (Table 3.3/3.4, 4-10 Mbit/s rows); S1 sends 2015 and S2 2890
#   packets (Table 3.1) in the 6.63 s from 3.37 s to 10 s: the sources' active time is
#   read off the saturated 1 Mbit/s bottleneck (Table 3.3: 1766 packets x 469 B x 8 /
#   1 Mbit/s = 6.63 s; Table 3.4 gives the same) -- the report does not state it.
# - CoDel: Queue/CoDel with the defaults pollere.net's patch adds to ns-default.tcl
#   (interval_ 0.1, target_ .005; hbatmit/ns2.35 tcl/lib/ns-default.tcl:254-257) and ns-2's
#   limit_ 50 packets (codel.cc tail-drops at q_->length() >= qlim_);
# - RTCP is left out (Agent/RTCP needs a Session/RTP; its share is ~0.1 % of the bytes).
# - counts: "sent" = packets S1's access link delivered to A (the trace's packets leaving
#   S1), "received" = packets the LossMonitor at R1/R2 got by the end of the 10 s run.

set RATES {1 2 3 4 5 7 10}
set SIZE 515
set T_END 10.0
set T_ON 6.63

# Queue/CoDel exists only when codel.so is preloaded; give it the patch's defaults.
catch {
    Queue/CoDel set interval_ 0.1
    Queue/CoDel set target_ 0.005
    Queue/CoDel set curq_ 0
    Queue/CoDel set d_exp_ 0.0
}

proc run {rate access disc start s1_pkts s2_pkts} {
    global SIZE T_END
    set ns [new Simulator]
    $ns use-scheduler Heap
    ns-random 1
    foreach n {S1 S2 A B R1 R2} { set node($n) [$ns node] }
    $ns duplex-link $node(S1) $node(A) ${access}Mb 1ms DropTail
    $ns duplex-link $node(S2) $node(A) 10Mb 1ms DropTail
    $ns duplex-link $node(A) $node(B) ${rate}Mb 10ms $disc
    $ns duplex-link $node(B) $node(R1) 100Mb 1ms DropTail
    $ns duplex-link $node(B) $node(R2) 100Mb 1ms DropTail
    # the bottleneck queue's events, for the mean sojourn (dequeue - enqueue) of the
    # packets it sent: what aqmlab's queues table calls sojourn_ms_mean
    set tname [file join [pwd] [format ".drr-trace-%d" [pid]]]
    set tf [open $tname w]
    $ns trace-queue $node(A) $node(B) $tf
    set qm1 [$ns monitor-queue $node(S1) $node(A) ""]
    set qm2 [$ns monitor-queue $node(S2) $node(A) ""]
    set on [expr {$T_END - $start}]
    foreach {s r n} [list S1 R1 $s1_pkts S2 R2 $s2_pkts] {
        set src($s) [new Agent/RTP]
        $src($s) set packetSize_ $SIZE
        $src($s) set interval_ [expr {$on / $n}]
        $src($s) set random_ 1
        $ns attach-agent $node($s) $src($s)
        set sink($r) [new Agent/LossMonitor]
        $ns attach-agent $node($r) $sink($r)
        $ns connect $src($s) $sink($r)
        $ns at $start "$src($s) start"
        $ns at $T_END "$src($s) stop"
    }
    $ns at $T_END "set ::result \[list \[$qm1 set pdepartures_\] \[$qm2 set pdepartures_\] \[$sink(R1) set npkts_\] \[$sink(R2) set npkts_\] \[$sink(R1) set bytes_\] \[$sink(R2) set bytes_\]\]"
    $ns at [expr {$T_END + 1e-9}] "$ns halt"
    $ns run
    close $tf
    return [concat $::result [sojourn_ms $tname]]
}

# Mean sojourn (ms) of the packets the traced queue sent: per packet uid, the "-"
# (dequeue) time minus its "+" (enqueue) time; dropped packets ("d") are left out.
proc sojourn_ms {tname} {
    set f [open $tname r]
    set sum 0.0
    set n 0
    while {[gets $f line] >= 0} {
        set ev [lindex $line 0]
        set uid [lindex $line 11]
        if {$ev == "+"} {
            set enq($uid) [lindex $line 1]
        } elseif {$ev == "-" && [info exists enq($uid)]} {
            set sum [expr {$sum + [lindex $line 1] - $enq($uid)}]
            incr n
        }
    }
    close $f
    file delete $tname
    if {$n == 0} { return 0.0 }
    return [expr {1000.0 * $sum / $n}]
}

# Each run in its own ns process (one Simulator per process).
proc runx {args} { return [exec [info nameofexecutable] [info script] ONE {*}$args] }

proc score {id value} { puts [format "SCORE %s %.1f" $id $value] }

if {[lindex $argv 0] == "ONE"} {
    puts [run {*}[lrange $argv 1 end]]
    exit 0
}

set CODEL_SO [file join [file dirname [file normalize [info script]]] codel.so]
set DISCS {DRR}
if {[file exists $CODEL_SO]} {
    set ::env(LD_PRELOAD) $CODEL_SO
    set DISCS {DRR CoDel}
}

# The paper's scenario a (S1 access 1 Mbit/s) is Tables 3.2, 3.6, 3.10 (DRR) and 3.2, 3.5,
# 3.9 (CoDel); b (5 Mbit/s) 3.1, 3.4, 3.8 (DRR) and 3.1, 3.3, 3.7 (CoDel).
foreach {access sent_t recv_drr node_drr recv_codel node_codel} {5 T3.1 T3.4 T3.8 T3.3 T3.7 1 T3.2 T3.6 T3.10 T3.5 T3.9} {
    foreach rate $RATES {
        foreach disc $DISCS {
            set d [string tolower $disc]
            set recv_t [set recv_$d]
            set node_t [set node_$d]
            lassign [runx $rate $access $disc [expr {$T_END - $T_ON}] 2015 2890] sent1 sent2 r1 r2 b1 b2 soj
            puts [format "INFO %s access=%sM rate=%sM bottleneck_sojourn_ms=%.1f" $d $access $rate $soj]
            score $recv_t-$d-${rate}M-received [expr {$r1 + $r2}]
            score $recv_t-$d-${rate}M-size [expr {double($b1 + $b2) / ($r1 + $r2)}]
            score $node_t-$d-${rate}M-R1 $r1
            score $node_t-$d-${rate}M-R2 $r2
            if {$rate == 10} {
                score $sent_t-$d-s1-sent $sent1
                score $sent_t-$d-s2-sent $sent2
                score $sent_t-$d-total-sent [expr {$sent1 + $sent2}]
            }
            lassign [runx $rate $access $disc 0.0 2015 2890] sent1 sent2 r1 r2 b1 b2 soj
            puts [format "INFO %s-whole-10s access=%sM rate=%sM sent_s1=%s R1=%s R2=%s total=%s bottleneck_sojourn_ms=%.1f" $d $access $rate $sent1 $r1 $r2 [expr {$r1 + $r2}] $soj]
        }
        lassign [runx $rate $access DropTail [expr {$T_END - $T_ON}] 2015 2890] sent1 sent2 r1 r2 b1 b2 soj
        puts [format "INFO droptail access=%sM rate=%sM sent_s1=%s R1=%s R2=%s total=%s bottleneck_sojourn_ms=%.1f" $access $rate $sent1 $r1 $r2 [expr {$r1 + $r2}] $soj]
    }
}
