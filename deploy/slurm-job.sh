#!/bin/bash
# An SVM job under Slurm: sbatch deploy/slurm-job.sh. Each srun below is a
# job step, and each step one SVM job: its ranks are the step's tasks
# (SLURM_PROCID, SLURM_NTASKS); the step's first task on each node starts
# svmf slurm-engine (found on PATH), which joins the step to the node's svmd
# where svmd runs as a node service (deploy/slurmd-svmd.conf), and
# otherwise runs the node's engine itself. A step across nodes without svmd
# needs the cluster secret on every node (/etc/svm/secret, as for svmd, or
# SVM_SECRET_FILE).
#SBATCH --job-name=svm-sor
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=4
#SBATCH --time=00:10:00
#SBATCH --output=svm-sor-%j.out
set -euo pipefail
export PATH=/opt/svm/bin:$PATH        # make install PREFIX=/opt/svm
# svmf run's engine flags for every step of this job (optional).
export SVM_SLURM_FLAGS="-region 1G"
# The time the step's nodes, and then the ranks on each, have to join:
# a rank that fails before it joins ends the step then, naming it.
export SVM_SLURM_JOIN_TIMEOUT=2m
# End the step at once when a rank fails before it joins its job (the
# engines end it for a rank that dies after).
export SLURM_KILL_BAD_EXIT=1
srun ./sor -iter 200
srun ./shallow 1024 50                 # built with svmf build
