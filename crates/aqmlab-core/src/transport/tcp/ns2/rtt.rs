//! ns-2.35's retransmission timer (tcp/tcp.cc:520–632): BSD's fixed-point estimator
//! in `tcpTick_` ticks. `t_srtt_` keeps 3 fractional bits, `t_rttvar_` 2; the RTO is
//! `((t_rttvar_ << 3) + t_srtt_) >> 3` ticks (SRTT + 4·RTTVAR, `rttvar_exp_` 2), before
//! the first sample `rtxcur_init_` (3 s). `rtt_timeout` multiplies by the backoff,
//! floors at `minrto_` (RFC 2988 order: the floor before the backoff), caps at
//! `maxrto_` and never goes below two ticks.
use crate::sim::time::Nanos;

const T_SRTT_BITS: u32 = 3;
const T_RTTVAR_BITS: u32 = 2;
/// `Agent/TCP set rttvar_exp_ 2` (ns-default.tcl:964).
const RTTVAR_EXP: u32 = 2;
/// `Agent/TCP set rttvar_init_ 12` (s, ns-default.tcl:960).
const RTTVAR_INIT_S: i64 = 12;

#[derive(Clone, Copy, Debug)]
pub struct Ns2Rtt {
    pub tick: Nanos,
    /// Smoothed RTT, ticks × 8 (0: no sample).
    pub t_srtt: i64,
    /// RTT variation, ticks × 4.
    pub t_rttvar: i64,
    /// Current RTO before backoff.
    pub t_rtxcur: Nanos,
    /// Backoff multiplier (1, 2, 4, ...).
    pub t_backoff: i64,
    /// The last sample, ticks.
    pub t_rtt: i64,
    min_rto: Nanos,
    max_rto: Nanos,
    /// The agent's random clock phase (`boot_time_`, uniform in one tick): RTT samples
    /// count the tick boundaries crossed, as a BSD kernel's slow timer does.
    boot_time: Nanos,
}

impl Ns2Rtt {
    /// `rtt_init` (tcp.cc:520) with `srtt_init_` 0.
    pub fn new(
        tick: Nanos,
        initial: Nanos,
        min_rto: Nanos,
        max_rto: Nanos,
        boot_time: Nanos,
    ) -> Self {
        Ns2Rtt {
            tick,
            t_srtt: 0,
            t_rttvar: (RTTVAR_INIT_S * 1_000_000_000 / tick as i64) << T_RTTVAR_BITS,
            t_rtxcur: initial,
            t_backoff: 1,
            t_rtt: 0,
            min_rto,
            max_rto,
            boot_time,
        }
    }

    /// `rtt_update(tao)` without timestamps (tcp.cc:565): `tao` = now − send time.
    pub fn update(&mut self, now: Nanos, tao: Nanos) {
        self.sample(now, tao, |delta, rttvar| {
            // BSD: the variation moves by the whole excess of |delta| over it, and
            // stays at least 1 (`rtt_update`).
            delta.abs() - (rttvar >> T_RTTVAR_BITS)
        });
        if self.t_rttvar <= 0 {
            self.t_rttvar = 1;
        }
        self.set_rtxcur();
    }

    /// `LinuxTcpAgent::rtt_update` (tcp/tcp-linux.cc:237) without timestamps: as
    /// `update` but a falling RTT moves the variation by only 1/8 of its excess
    /// (Linux's `mdev` rule, 282–288) and the variation has no floor (290).
    pub fn update_linux(&mut self, now: Nanos, tao: Nanos) {
        self.sample(now, tao, |delta, rttvar| {
            if delta < 0 {
                let d = -delta - (rttvar >> T_RTTVAR_BITS);
                if d > 0 {
                    d >> T_SRTT_BITS
                } else {
                    d
                }
            } else {
                delta - (rttvar >> T_RTTVAR_BITS)
            }
        });
        self.set_rtxcur();
    }

    /// The part both estimators share: the sample in ticks (with this agent's clock
    /// phase), the first-sample initialisation, and the smoothed RTT's update (`delta`
    /// is a C `short`; RTTs stay far below 2^15 ticks); `var_step(delta, t_rttvar)`
    /// gives the variation's step.
    fn sample(&mut self, now: Nanos, tao: Nanos, var_step: impl Fn(i64, i64) -> i64) {
        let tick = self.tick;
        let sendtime = now - tao + self.boot_time;
        let tickoff = sendtime % tick;
        self.t_rtt = ((tao + tickoff) / tick).max(1) as i64;
        if self.t_srtt != 0 {
            let delta = self.t_rtt - (self.t_srtt >> T_SRTT_BITS);
            self.t_srtt += delta;
            if self.t_srtt <= 0 {
                self.t_srtt = 1;
            }
            self.t_rttvar += var_step(delta, self.t_rttvar);
        } else {
            self.t_srtt = self.t_rtt << T_SRTT_BITS;
            self.t_rttvar = self.t_rtt << (T_RTTVAR_BITS - 1);
        }
    }

    /// `t_rtxcur_` = SRTT + 4·RTTVAR, in ticks (end of `rtt_update`).
    fn set_rtxcur(&mut self) {
        let ticks = ((self.t_rttvar << (RTTVAR_EXP + (T_SRTT_BITS - T_RTTVAR_BITS))) + self.t_srtt)
            >> T_SRTT_BITS;
        self.t_rtxcur = ticks as Nanos * self.tick;
    }

    /// `rtt_timeout` (tcp.cc:529) with `rfc2988_` true.
    pub fn timeout(&self) -> Nanos {
        let b = self.t_backoff as Nanos;
        let mut t = if self.t_rtxcur < self.min_rto {
            self.min_rto * b
        } else {
            self.t_rtxcur * b
        };
        if t > self.max_rto {
            t = self.max_rto;
        }
        t.max(2 * self.tick)
    }

    /// `rtt_backoff` (tcp.cc:611).
    pub fn backoff(&mut self) {
        if self.t_backoff < 64 || self.timeout() < self.max_rto {
            self.t_backoff <<= 1;
        }
        if self.t_backoff > 8 {
            // Backed off this far: keep the SRTT in the variation and restart it.
            self.t_rttvar += self.t_srtt >> T_SRTT_BITS;
            self.t_srtt = 0;
        }
    }

    /// Smoothed RTT in ns (None before a sample), for reports.
    pub fn srtt(&self) -> Option<Nanos> {
        (self.t_srtt != 0).then(|| (self.t_srtt as Nanos * self.tick) >> T_SRTT_BITS)
    }
}
