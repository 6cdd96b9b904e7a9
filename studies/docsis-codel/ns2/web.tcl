# Paper 004's web page model (Sec 3.2.3) on ns-2.35 FullTcp/Sack, no load.
# The paper's web page (100 KB HTML from server 1, then 6 connections to each of 4
# servers, 25 objects of 25 KB per server, 5 s think) on real ns-2.35, no other load,
# reading "subsequent GET" as a NEW Agent/TCP/FullTcp/Sack connection per object.
# The DOCSIS link is reduced to 1 ms each way (upstream 30 Mbit/s, downstream 50 Mbit/s
# = the peak rate; the 20 MB downstream burst covers a 2.6 MB page). Server one-way
# delays 9, 14, 24, 49 ms (RTT 20, 30, 50, 100 ms). Prints each page load time.
# Usage: ns web.tcl [WINDOW SEGSIZE]   (default: ns-2's own, 20 536)
# It also traces the upstream (client -> cmts) and, at the end, prints how many packets
# entered it in each 6 ms window (2 ms steps): a 32-packet TxQ that holds each packet
# for the 4-6 ms request-grant loop (paper Sec 2.2.2) overflows in windows above 32
# (studies/docsis-codel/README.md, "TxQ").
set win [expr {$argc >= 1 ? [lindex $argv 0] : 20}]
set seg [expr {$argc >= 2 ? [lindex $argv 1] : 536}]
set ns [new Simulator]
Agent/TCP/FullTcp set window_ $win
Agent/TCP/FullTcp set segsize_ $seg
set c [$ns node]; set cmts [$ns node]
$ns simplex-link $c $cmts 30Mb 1ms DropTail
$ns simplex-link $cmts $c 50Mb 1ms DropTail
$ns queue-limit $cmts $c 10000
set owd {9ms 14ms 24ms 49ms}
set owds {0.011 0.016 0.026 0.051}
for {set i 0} {$i < 4} {incr i} {
  set s($i) [$ns node]
  $ns duplex-link $s($i) $cmts 1Gb [lindex $owd $i] DropTail
}
set pages {}
set left 0
set nobj 0
Agent/TCP/FullTcp instproc done_data {} {
  global ns
  $self instvar srv ftp
  finish_obj $srv [expr [$ns now]] $ftp
}
proc get {i bytes} {
  # client GET at now: server starts (opens, sends) after the one-way request delay
  global ns s c owds
  set src [new Agent/TCP/FullTcp/Sack]
  set dst [new Agent/TCP/FullTcp/Sack]
  $src set signal_on_empty_ true
  $src set srv $i
  $ns attach-agent $s($i) $src; $ns attach-agent $c $dst
  $ns connect $src $dst; $dst listen
  set ftp [new Application/FTP]; $ftp attach-agent $src; $src set ftp $ftp
  $ns at [expr [$ns now] + [lindex $owds $i]] "$ftp send $bytes"
}
proc finish_obj {i t ftp} {
  global ns left queue owds start nobj
  incr left -1
  incr nobj
  if {$nobj == 1} {
     for {set k 0} {$k < 4} {incr k} { for {set j 0} {$j < 6} {incr j} { incr queue($k) -1; get $k 25000 } }
     return
  }
  if {$queue($i) > 0} { incr queue($i) -1; get $i 25000 }
  if {$left == 0} {
     # client got the last byte ~ one-way delay before the sender saw the ACK
     puts [format "PLT %.3f" [expr $t - [lindex $owds $i] - $start]]
     $ns at [expr [$ns now] + 5] "page"
  }
}
proc page {} {
  global ns queue left start nobj
  set start [$ns now]; set nobj 0
  set left 101
  for {set k 0} {$k < 4} {incr k} { set queue($k) 25 }
  get 0 100000
}
set tf [open upstream.tr w]
$ns trace-queue $c $cmts $tf
proc upstream_windows {} {
  # packets entering the upstream per 2 ms bin, then per 6 ms window (3 bins)
  global tf
  close $tf
  set f [open upstream.tr r]
  array set bin {}
  set last 0
  while {[gets $f line] >= 0} {
    if {[lindex $line 0] ne "+"} continue
    set b [expr {int([lindex $line 1] / 0.002)}]
    if {[info exists bin($b)]} { incr bin($b) } else { set bin($b) 1 }
    if {$b > $last} { set last $b }
  }
  close $f
  set max 0; set over 0; set n 0
  for {set i 0} {$i + 2 <= $last} {incr i} {
    set w 0
    foreach j [list $i [expr {$i + 1}] [expr {$i + 2}]] { if {[info exists bin($j)]} { incr w $bin($j) } }
    if {$w > $max} { set max $w }
    if {$w > 32} { incr over }
    incr n
  }
  puts "UPSTREAM 6ms windows $n, above 32 packets $over, max $max"
}
$ns at 0.0 "page"
$ns at 40 "upstream_windows; exit 0"
$ns run
